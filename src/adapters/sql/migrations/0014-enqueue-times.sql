-- jobvisor schema, version 14: the times of a job, checked where they are stored.
--
-- 1. `enqueue` (migration 0007) refuses what the library refuses: a run_at or expires_at
--    outside the years 1 to 9999 (`infinity`, `-infinity`, year 10000, BC), which a worker's
--    reader could not take. It also takes times relative to the database's clock, `run_in`
--    and `expires_in`, and checks expires_at against the run_at it resolved (given, or now()),
--    never against a clock of the caller's. A null payload is `{}`, as an omitted one is.
--    Dropped and created again: an argument list cannot change in place. The new arguments
--    come last, so calls by position keep their meaning.
-- 2. `refuse_job_times`, for the library's enqueue statement (queries/enqueue-new-jobs.ts):
--    a job whose times the statement resolved from the store's clock (`runIn`, `expiresIn`, a
--    default runAt) and found wrong raises, so that nothing of the statement is written.

drop function :JOBVISOR_SCHEMA.enqueue(text, text, jsonb, timestamptz, integer, text, integer, text, timestamptz, integer);

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
  if enqueue.run_in is not null then
    due_from := 'run_in';
  elsif enqueue.run_at is null then
    due_from := 'now()';
  end if;
  if enqueue.expires_in is not null then
    expiry_from := 'expires_in';
  end if;
  due := coalesce(enqueue.run_at, now() + enqueue.run_in, now());
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

  -- As enqueue_jobs: a live holder of the unique key is returned instead. One that committed
  -- after the insert looked, or finished before the look-up, sends it round again.
  for tries in 1..3 loop
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, unique_key,
      concurrency_key, expires_at, created_at, updated_at)
    values (enqueue.queue, enqueue.kind, body, enqueue.priority, due,
      enqueue.max_attempts, enqueue.unique_key, enqueue.concurrency_key, expiry, now(), now())
    on conflict (queue, unique_key) where unique_key is not null and state in ('pending', 'retrying', 'running', 'sleeping')
    do nothing
    returning id into enqueue.job_id;
    if enqueue.job_id is not null then
      insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
      values (enqueue.job_id, null, 'pending', 0, null, now(), null);
      perform pg_notify(:JOBVISOR_CHANNEL, enqueue.queue);
      enqueue.created := true;
      return;
    end if;
    select j.id into enqueue.job_id from :JOBVISOR_SCHEMA.jobs j
    where j.queue = enqueue.queue and j.unique_key = enqueue.unique_key and j.state in ('pending', 'retrying', 'running', 'sleeping');
    if enqueue.job_id is not null then
      enqueue.created := false;
      return;
    end if;
  end loop;
  raise exception 'enqueue: no live job found for unique key % in queue %', enqueue.unique_key, enqueue.queue;
end
$$;

-- Raises invalid_parameter_value for a job's resolved times, naming the library's option
-- (`expiresAt: …`, read back into an InvalidOptionError by queries/enqueue-jobs.ts). Called by
-- the enqueue statement only for a job whose times fail its inline check, so never on the
-- common path. The library checked every time it was given: one out of range came from
-- runIn or expiresIn; `relative_expiry`: expires_at came from expiresIn.
create function :JOBVISOR_SCHEMA.refuse_job_times(
  run_at timestamptz, expires_at timestamptz, relative_expiry boolean)
returns timestamptz
-- Volatile: the planner never evaluates it ahead of the CASE that guards its call.
language plpgsql volatile as $$
declare
  earliest constant timestamptz := '0001-01-01 00:00:00+00';
  too_late constant timestamptz := '10000-01-01 00:00:00+00';
  -- Date.prototype.toISOString's form, for the years 1 to 9999.
  iso constant text := 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
  run_text constant text := to_char(run_at at time zone 'UTC', iso);
  expiry_text constant text := to_char(expires_at at time zone 'UTC', iso);
begin
  if not (run_at >= earliest and run_at < too_late) then
    raise exception 'runIn: gives runAt %, outside the years 1 to 9999', run_text using errcode = '22023';
  end if;
  if not (expires_at >= earliest and expires_at < too_late) then
    raise exception 'expiresIn: gives expiresAt %, outside the years 1 to 9999', expiry_text using errcode = '22023';
  end if;
  if relative_expiry then
    raise exception 'expiresIn: gives expiresAt %, not after runAt (%)', expiry_text, run_text using errcode = '22023';
  end if;
  raise exception 'expiresAt: must be after runAt (%), got %', run_text, expiry_text using errcode = '22023';
end
$$;
