-- jobvisor schema, version 19: keys that decide what an enqueue does with the jobs already
-- there (docs/enqueueing.md).
--
-- 1. Replace by unique key: `enqueue_keyed` rewrites a pending or retrying holder in place
--    ('replace'), or cancels a running or sleeping one at once and queues the new job
--    ('replace_running'): the cancelled row has no lease left, so every write of its attempt
--    fails its fence; its worker is told (`!cancel:<id>`) and aborts.
-- 2. Debounce: `debounce_key` and `debounce_until` (the burst's bound, from its first enqueue).
--    While the job of a burst has never been claimed (pending, attempt 0), its key is in
--    jobs_debounce_idx, and an enqueue with the key is one INSERT … ON CONFLICT DO UPDATE on it:
--    concurrent enqueues from any number of clients make one job and rewrite it; one that
--    comes once it is claimed starts the next burst. A claimed job leaves the index for good
--    (a snooze or a wake-up brings it back to pending with attempt > 0), so it never collides
--    with the next burst's.
-- 3. `enqueue` (SQL) takes on_conflict and the debounce arguments last; calls by position keep
--    their meaning. The library's keyed statement (queries/enqueue-keyed-jobs.ts) calls
--    enqueue_keyed once per job, in input order, in one statement.

alter table :JOBVISOR_SCHEMA.jobs
  add column debounce_key text,
  add column debounce_until timestamptz,
  add constraint jobs_debounce_key_length check (octet_length(debounce_key) <= 1000) not valid;

create unique index jobs_debounce_idx on :JOBVISOR_SCHEMA.jobs (queue, debounce_key)
  where debounce_key is not null and state = 'pending' and attempt = 0;

-- One job, its times resolved and checked by the caller. Answers the job as it stands after
-- the call: the new one (created), the holder rewritten (replaced, not created), the holder
-- as it is (neither), or the new one that took a cancelled holder's key (both).
create function :JOBVISOR_SCHEMA.enqueue_keyed(
  p_now timestamptz, p_queue text, p_kind text, p_payload jsonb, p_priority integer, p_run_at timestamptz,
  p_max_attempts integer, p_unique_key text, p_concurrency_key text, p_expires_at timestamptz,
  p_trace_context jsonb, p_on_conflict text, p_debounce_key text, p_debounce_until timestamptz,
  out created boolean, out replaced boolean, out job :JOBVISOR_SCHEMA.jobs)
language plpgsql volatile as $$
declare
  v_id bigint;
  v_holder :JOBVISOR_SCHEMA.jobs;
  v_error jsonb;
begin
  created := false;
  replaced := false;
  if p_debounce_key is not null then
    -- One statement: a concurrent enqueue of the key waits on the row's lock and updates the
    -- row this one inserted; a claim that takes the row first makes this an insert.
    insert into :JOBVISOR_SCHEMA.jobs as j (queue, kind, payload, priority, run_at, max_attempts, concurrency_key,
      expires_at, trace_context, created_at, updated_at, debounce_key, debounce_until)
    values (p_queue, p_kind, p_payload, p_priority, least(p_run_at, p_debounce_until), p_max_attempts, p_concurrency_key,
      p_expires_at, p_trace_context, p_now, p_now, p_debounce_key, p_debounce_until)
    on conflict (queue, debounce_key) where debounce_key is not null and state = 'pending' and attempt = 0
    do update set kind = excluded.kind, payload = excluded.payload, priority = excluded.priority,
      run_at = least(excluded.run_at, j.debounce_until), max_attempts = excluded.max_attempts,
      concurrency_key = excluded.concurrency_key, expires_at = excluded.expires_at,
      trace_context = excluded.trace_context, updated_at = p_now
    returning j.id, j.xmax = 0 into v_id, created;
  elsif p_unique_key is null then
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, concurrency_key,
      expires_at, trace_context, created_at, updated_at)
    values (p_queue, p_kind, p_payload, p_priority, p_run_at, p_max_attempts, p_concurrency_key,
      p_expires_at, p_trace_context, p_now, p_now)
    returning id into v_id;
    created := true;
  else
    -- A holder that committed after the insert looked, or ended before the look-up, sends it
    -- round again; so does one this call cancelled.
    for tries in 1..3 loop
      insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, unique_key,
        concurrency_key, expires_at, trace_context, created_at, updated_at)
      values (p_queue, p_kind, p_payload, p_priority, p_run_at, p_max_attempts, p_unique_key,
        p_concurrency_key, p_expires_at, p_trace_context, p_now, p_now)
      on conflict (queue, unique_key) where unique_key is not null and state in ('pending', 'retrying', 'running', 'sleeping')
      do nothing
      returning id into v_id;
      if v_id is not null then
        created := true;
        exit;
      end if;
      if p_on_conflict = 'return' then
        select * into v_holder from :JOBVISOR_SCHEMA.jobs h
        where h.queue = p_queue and h.unique_key = p_unique_key and h.state in ('pending', 'retrying', 'running', 'sleeping');
      else
        select * into v_holder from :JOBVISOR_SCHEMA.jobs h
        where h.queue = p_queue and h.unique_key = p_unique_key and h.state in ('pending', 'retrying', 'running', 'sleeping')
        for update;
      end if;
      if found then
        if p_on_conflict = 'return' or (p_on_conflict = 'replace' and v_holder.state in ('running', 'sleeping')) then
          job := v_holder;
          return;
        end if;
        replaced := true;
        if v_holder.state in ('pending', 'retrying') then
          -- Attempts spent stay spent; at least one is left.
          update :JOBVISOR_SCHEMA.jobs set kind = p_kind, payload = p_payload, priority = p_priority, run_at = p_run_at,
            max_attempts = greatest(p_max_attempts, attempt + 1), concurrency_key = p_concurrency_key,
            expires_at = p_expires_at, trace_context = p_trace_context, updated_at = p_now
          where id = v_holder.id
          returning * into job;
          perform pg_notify(:JOBVISOR_CHANNEL, p_queue);
          return;
        end if;
        -- Running or sleeping, replace_running: cancelled now, lease and all.
        v_error := jsonb_build_object('code', 'replaced', 'message', 'replaced by a new job with its unique key');
        update :JOBVISOR_SCHEMA.jobs set state = 'cancelled', error = v_error, lease_token = null, lease_expires_at = null,
          wait_signal = null, finished_at = p_now, updated_at = p_now
        where id = v_holder.id;
        insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
        values (v_holder.id, v_holder.state, 'cancelled', v_holder.attempt, null, p_now, v_error);
        perform pg_notify(:JOBVISOR_CHANNEL, '!cancel:' || v_holder.id);
      end if;
    end loop;
    if v_id is null then
      raise exception 'enqueue: no live job found for unique key % in queue %', p_unique_key, p_queue;
    end if;
  end if;
  select * into job from :JOBVISOR_SCHEMA.jobs where id = v_id;
  if created then
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    values (v_id, null, 'pending', 0, null, p_now, null);
  end if;
  perform pg_notify(:JOBVISOR_CHANNEL, p_queue);
end
$$;

drop function :JOBVISOR_SCHEMA.enqueue(text, text, jsonb, timestamptz, integer, text, integer, text, timestamptz, integer,
  interval, interval);

create function :JOBVISOR_SCHEMA.enqueue(
  queue text,
  kind text,
  payload jsonb default '{}',
  -- Not before this time; null: now() + run_in, or now().
  run_at timestamptz default null,
  priority integer default 0,
  unique_key text default null,
  max_attempts integer default 3,
  concurrency_key text default null,
  expires_at timestamptz default null,
  -- As the queue's maxPayloadBytes, in bytes of the payload's JSON text.
  max_payload_bytes integer default 1048576,
  -- Not before now() + run_in (not with run_at), by the database's clock.
  run_in interval default null,
  -- Dead at now() + expires_in (not with expires_at), by the database's clock.
  expires_in interval default null,
  -- What a live holder of unique_key gets: 'return', 'replace' or 'replace_running' (the
  -- library's onConflict).
  on_conflict text default 'return',
  -- One job per burst with this key, due debounce_in after the burst's last enqueue and never
  -- later than debounce_max_wait after its first (not with run_at, run_in or unique_key).
  debounce_key text default null,
  debounce_in interval default null,
  debounce_max_wait interval default null,
  out job_id bigint,
  out created boolean)
language plpgsql volatile as $$
#variable_conflict use_column
declare
  -- Queue and kind names, as validation.ts's NAME: what a CLI argument, a log line and a URL
  -- carry unescaped.
  name_pattern constant text := '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$';
  name_rule constant text := 'must be 1-128 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit';
  -- validation.ts's MAX_KEY_BYTES (and migration 5's checks): a longer key would not fit the
  -- indexes that hold it.
  max_key_bytes constant integer := 1000;
  -- validation.ts's years 1 to 9999: what a worker reads as a Date and an ISO 8601 string.
  earliest constant timestamptz := '0001-01-01 00:00:00+00';
  too_late constant timestamptz := '10000-01-01 00:00:00+00';
  body jsonb := coalesce(enqueue.payload, '{}');
  due timestamptz;
  expiry timestamptz;
  due_from text := 'run_at';
  expiry_from text := 'expires_at';
  payload_bytes integer;
  keyed record;
begin
  if enqueue.queue is null or enqueue.queue !~ name_pattern then
    raise exception 'enqueue: queue %; got %', name_rule, coalesce(to_json(enqueue.queue)::text, 'null') using errcode = '22023';
  end if;
  if enqueue.kind is null or enqueue.kind !~ name_pattern then
    raise exception 'enqueue: kind %; got %', name_rule, coalesce(to_json(enqueue.kind)::text, 'null') using errcode = '22023';
  end if;
  if enqueue.max_payload_bytes is null or enqueue.max_payload_bytes < 1 then
    raise exception 'enqueue: max_payload_bytes must be a positive integer, got %', coalesce(enqueue.max_payload_bytes::text, 'null')
      using errcode = '22023';
  end if;
  payload_bytes := octet_length(body::text);
  if payload_bytes > enqueue.max_payload_bytes then
    raise exception 'enqueue: payload is % bytes of JSON, over the limit of %', payload_bytes, enqueue.max_payload_bytes
      using errcode = '22023';
  end if;
  if enqueue.priority is null then
    raise exception 'enqueue: priority must be an integer, got null' using errcode = '22023';
  end if;
  if enqueue.max_attempts is null or enqueue.max_attempts < 1 then
    raise exception 'enqueue: max_attempts must be a positive integer, got %', coalesce(enqueue.max_attempts::text, 'null')
      using errcode = '22023';
  end if;
  if enqueue.unique_key = '' then
    raise exception 'enqueue: unique_key must be a non-empty string' using errcode = '22023';
  end if;
  if octet_length(enqueue.unique_key) > max_key_bytes then
    raise exception 'enqueue: unique_key is % bytes of UTF-8, over the limit of % (the store indexes it)',
      octet_length(enqueue.unique_key), max_key_bytes using errcode = '22023';
  end if;
  if enqueue.concurrency_key = '' then
    raise exception 'enqueue: concurrency_key must be a non-empty string' using errcode = '22023';
  end if;
  if octet_length(enqueue.concurrency_key) > max_key_bytes then
    raise exception 'enqueue: concurrency_key is % bytes of UTF-8, over the limit of % (the store indexes it)',
      octet_length(enqueue.concurrency_key), max_key_bytes using errcode = '22023';
  end if;

  if enqueue.on_conflict is null or enqueue.on_conflict not in ('return', 'replace', 'replace_running') then
    raise exception 'enqueue: on_conflict must be ''return'', ''replace'' or ''replace_running'', got %', coalesce(enqueue.on_conflict, 'null')
      using errcode = '22023';
  end if;
  if enqueue.on_conflict <> 'return' and enqueue.unique_key is null then
    raise exception 'enqueue: on_conflict % needs a unique_key', enqueue.on_conflict using errcode = '22023';
  end if;
  if enqueue.debounce_key is null and (enqueue.debounce_in is not null or enqueue.debounce_max_wait is not null) then
    raise exception 'enqueue: debounce_in and debounce_max_wait need a debounce_key' using errcode = '22023';
  end if;
  if enqueue.debounce_key is not null then
    if enqueue.debounce_key = '' or octet_length(enqueue.debounce_key) > max_key_bytes then
      raise exception 'enqueue: debounce_key must be 1 to % bytes of UTF-8', max_key_bytes using errcode = '22023';
    end if;
    if enqueue.debounce_in is null or now() + enqueue.debounce_in < now() then
      raise exception 'enqueue: debounce_in must be an interval of 0 or more, got %', coalesce(enqueue.debounce_in::text, 'null') using errcode = '22023';
    end if;
    if now() + enqueue.debounce_max_wait < now() + enqueue.debounce_in then
      raise exception 'enqueue: debounce_max_wait must be at least debounce_in (%), got %', enqueue.debounce_in, enqueue.debounce_max_wait
        using errcode = '22023';
    end if;
    if enqueue.run_at is not null or enqueue.run_in is not null or enqueue.unique_key is not null or enqueue.on_conflict <> 'return' then
      raise exception 'enqueue: run_at, run_in, unique_key and on_conflict cannot be given with debounce_key: the burst sets when its one job runs'
        using errcode = '22023';
    end if;
  end if;
  if enqueue.run_at is not null and enqueue.run_in is not null then
    raise exception 'enqueue: give run_at or run_in, not both' using errcode = '22023';
  end if;
  if enqueue.expires_at is not null and enqueue.expires_in is not null then
    raise exception 'enqueue: give expires_at or expires_in, not both' using errcode = '22023';
  end if;
  -- Compared as times, not as intervals: '1 month -40 days' is an interval too.
  if now() + enqueue.run_in < now() then
    raise exception 'enqueue: run_in must not be negative, got %', enqueue.run_in using errcode = '22023';
  end if;
  if now() + enqueue.expires_in <= now() then
    raise exception 'enqueue: expires_in must be positive, got %', enqueue.expires_in using errcode = '22023';
  end if;
  if enqueue.debounce_key is not null then
    due_from := 'debounce_in';
  elsif enqueue.run_in is not null then
    due_from := 'run_in';
  elsif enqueue.run_at is null then
    due_from := 'now()';
  end if;
  if enqueue.expires_in is not null then
    expiry_from := 'expires_in';
  end if;
  due := coalesce(enqueue.run_at, now() + enqueue.run_in, now() + enqueue.debounce_in, now());
  expiry := coalesce(enqueue.expires_at, now() + enqueue.expires_in);
  if not (due >= earliest and due < too_late) then
    raise exception 'enqueue: % gives run_at %, outside the years 1 to 9999', due_from, due using errcode = '22023';
  end if;
  if expiry is not null and not (expiry >= earliest and expiry < too_late) then
    raise exception 'enqueue: % gives expires_at %, outside the years 1 to 9999', expiry_from, expiry using errcode = '22023';
  end if;
  if expiry <= due then
    raise exception 'enqueue: expires_at must be after run_at (%, from %), got % (from %)', due, due_from, expiry, expiry_from
      using errcode = '22023';
  end if;

  select * into keyed from :JOBVISOR_SCHEMA.enqueue_keyed(now(), enqueue.queue, enqueue.kind, body, enqueue.priority, due,
    enqueue.max_attempts, enqueue.unique_key, enqueue.concurrency_key, expiry, null, enqueue.on_conflict,
    enqueue.debounce_key, now() + enqueue.debounce_max_wait);
  enqueue.job_id := (keyed.job).id;
  enqueue.created := keyed.created;
end
$$;
