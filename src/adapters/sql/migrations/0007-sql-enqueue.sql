-- jobvisor schema, version 7: enqueue from SQL (a trigger, a migration, psql, any language),
-- with the checks, unique-key dedupe, history row and NOTIFY of the library's enqueue
-- (queries/enqueue-jobs.ts). Inside the caller's transaction, like everything in it: the job
-- exists, and workers hear of it, only if that transaction commits.
--
--   select * from :JOBVISOR_SCHEMA.enqueue('emails', 'welcome', '{"userId": 42}');
--   select * from :JOBVISOR_SCHEMA.enqueue('emails', 'digest', payload => '{}', unique_key => 'digest:2026-06');
--
-- Answers (job_id, created): created is false when a live job of the queue holds the unique
-- key; job_id is then that job's. Bad input raises invalid_parameter_value (22023) naming the
-- argument, and nothing is written. It cannot know the queue's handlers: a kind no handler
-- knows is skipped (`unknown_kind`) when claimed.
--
-- `:JOBVISOR_CHANNEL` is the schema's LISTEN/NOTIFY channel as a string literal (with psql:
-- `-v JOBVISOR_CHANNEL="'jobvisor:jobvisor'"` beside `-v JOBVISOR_SCHEMA=jobvisor`).

create function :JOBVISOR_SCHEMA.enqueue(
  queue text,
  kind text,
  payload jsonb default '{}',
  -- Not before this time; null: now.
  run_at timestamptz default null,
  priority integer default 0,
  unique_key text default null,
  max_attempts integer default 3,
  concurrency_key text default null,
  expires_at timestamptz default null,
  -- As the queue's maxPayloadBytes, in bytes of the payload's JSON text.
  max_payload_bytes integer default 1048576,
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
  due timestamptz := coalesce(enqueue.run_at, now());
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
  payload_bytes := octet_length(coalesce(enqueue.payload, 'null')::text);
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
  if enqueue.run_at is not null and enqueue.expires_at <= enqueue.run_at then
    raise exception 'enqueue: expires_at must be after run_at (%), got %', enqueue.run_at, enqueue.expires_at
      using errcode = '22023';
  end if;

  -- As enqueue_jobs: a live holder of the unique key is returned instead. One that committed
  -- after the insert looked, or finished before the look-up, sends it round again.
  for tries in 1..3 loop
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, unique_key,
      concurrency_key, expires_at, created_at, updated_at)
    values (enqueue.queue, enqueue.kind, coalesce(enqueue.payload, 'null'), enqueue.priority, due,
      enqueue.max_attempts, enqueue.unique_key, enqueue.concurrency_key, enqueue.expires_at, now(), now())
    on conflict (queue, unique_key) where unique_key is not null and state in ('pending', 'retrying', 'running')
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
    where j.queue = enqueue.queue and j.unique_key = enqueue.unique_key and j.state in ('pending', 'retrying', 'running');
    if enqueue.job_id is not null then
      enqueue.created := false;
      return;
    end if;
  end loop;
  raise exception 'enqueue: no live job found for unique key % in queue %', enqueue.unique_key, enqueue.queue;
end
$$;
