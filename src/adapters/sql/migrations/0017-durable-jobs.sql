-- jobvisor schema, version 17: durable jobs (docs/durable-jobs.md): steps whose results are
-- kept, sleeps and waits for signals that give the worker back.
--
-- A job that sleeps or waits for a signal is in its own row state, `sleeping`: no lease, no
-- worker, no key slot. Its `run_at` is when it is due again (the sleep's end, the wait's
-- timeout, or 9999-12-31 for a wait with none), so the claim takes it exactly as it takes a
-- retrying job whose backoff has passed: jobs_claim_idx is made again to hold sleeping rows.
-- `wait_signal` names the signal a sleeping job waits for; a signal of that name makes it
-- `pending` at once (signal_job below). Signals sent while the job does not wait for them
-- wait in `job_signals`, the job's mailbox, oldest first.
--
-- `steps` holds what the handler's steps, sleeps and waits stored, in order, compact:
-- {"n": name, "k": "step"|"sleep"|"signal", "a": epoch ms, "v": value, "u": until (epoch ms),
--  "s": signal name, "r": "waiting"|"received"|"timedOut"}. A later entry of a name supersedes
-- an earlier one (a wait that ended). jsonb, appended in the statement that fences it.

alter table :JOBVISOR_SCHEMA.jobs drop constraint jobs_state_check;
alter table :JOBVISOR_SCHEMA.jobs add constraint jobs_state_check
  check (state in ('pending', 'running', 'retrying', 'completed', 'dead', 'skipped', 'cancelled', 'waiting', 'sleeping')) not valid;

alter table :JOBVISOR_SCHEMA.jobs
  add column steps jsonb,
  add column wait_signal text;

drop index :JOBVISOR_SCHEMA.jobs_claim_idx;
create index jobs_claim_idx on :JOBVISOR_SCHEMA.jobs (queue, priority desc, run_at, id)
  where state in ('pending', 'retrying', 'sleeping');

-- A sleeping job is live: it keeps its unique key.
drop index :JOBVISOR_SCHEMA.jobs_unique_key_idx;
create unique index jobs_unique_key_idx on :JOBVISOR_SCHEMA.jobs (queue, unique_key)
  where unique_key is not null and state in ('pending', 'retrying', 'running', 'sleeping');

-- The reaper ends a sleeping job past its deadline across all attempts, as a pending one.
drop index :JOBVISOR_SCHEMA.jobs_expiry_idx;
create index jobs_expiry_idx on :JOBVISOR_SCHEMA.jobs (expires_at)
  where expires_at is not null and state in ('pending', 'retrying', 'waiting', 'sleeping');

create table :JOBVISOR_SCHEMA.job_signals (
  id bigint generated always as identity primary key,
  job_id bigint not null references :JOBVISOR_SCHEMA.jobs (id) on delete cascade,
  name text not null,
  payload jsonb not null,
  sent_at timestamptz not null
);
create index job_signals_job_idx on :JOBVISOR_SCHEMA.job_signals (job_id, name, id);

-- Sends a signal to a job: the job's row is locked first, so a signal and the job's own move
-- to `sleeping` (suspend_job) serialise on it and neither can miss the other. Wakes the job
-- when it waits for this name (history sleeping → pending, code `signal`), else keeps the
-- payload in its mailbox. Raises P0002 when no such job, 55000 when it has ended.
-- Returns (woke, the row).
create function :JOBVISOR_SCHEMA.signal_job(p_now timestamptz, p_id bigint, p_name text, p_payload jsonb)
returns table (woke boolean, job_state text) language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_job record;
begin
  select j.id, j.state, j.wait_signal, j.queue, j.attempt, j.worker_id into v_job
  from :JOBVISOR_SCHEMA.jobs j where j.id = p_id for update;
  if not found then
    raise exception 'job % not found', p_id using errcode = 'P0002';
  end if;
  if v_job.state in ('completed', 'dead', 'skipped', 'cancelled') then
    raise exception 'job % has ended (%)', p_id, v_job.state using errcode = '55000';
  end if;
  insert into :JOBVISOR_SCHEMA.job_signals (job_id, name, payload, sent_at) values (p_id, p_name, p_payload, v_now);
  if v_job.state = 'sleeping' and v_job.wait_signal = p_name then
    update :JOBVISOR_SCHEMA.jobs set state = 'pending', run_at = v_now, wait_signal = null, updated_at = v_now
    where id = p_id;
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    values (p_id, 'sleeping', 'pending', v_job.attempt, v_job.worker_id, v_now,
      jsonb_build_object('code', 'signal', 'message', format('signal "%s" arrived', p_name)));
    perform pg_notify(:JOBVISOR_CHANNEL, v_job.queue);
    return query select true, 'pending'::text;
  else
    return query select false, v_job.state;
  end if;
end $$;

-- The user-facing form, beside jobvisor.enqueue: callable in the caller's own transaction.
-- The name as the library's (a wait could never take another), the payload JSON of at most
-- max_payload_bytes as jsonb prints it (22023 otherwise, nothing written).
create function :JOBVISOR_SCHEMA.send_signal(job_id bigint, name text, payload jsonb default '{}',
  max_payload_bytes integer default 1048576)
returns boolean language plpgsql volatile as $$
declare
  v_woke boolean;
  v_bytes integer;
begin
  if name is null or name !~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' then
    raise exception 'send_signal: name must be 1-128 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit; got %',
      coalesce(to_json(name)::text, 'null') using errcode = '22023';
  end if;
  if max_payload_bytes is null or max_payload_bytes < 1 then
    raise exception 'send_signal: max_payload_bytes must be a positive integer, got %', coalesce(max_payload_bytes::text, 'null')
      using errcode = '22023';
  end if;
  v_bytes := octet_length(coalesce(payload, 'null')::text);
  if v_bytes > max_payload_bytes then
    raise exception 'send_signal: payload is % bytes of JSON, over the limit of %', v_bytes, max_payload_bytes using errcode = '22023';
  end if;
  select s.woke into v_woke from :JOBVISOR_SCHEMA.signal_job(null, job_id, name, coalesce(payload, 'null')) s;
  return v_woke;
end $$;

-- A running attempt asks to sleep or to wait for a signal (fenced by its lease).
-- p_kind 'sleep' | 'signal'; p_until: when it is due again (null: p_delay_ms from now; for a
-- wait with no timeout, 9999-12-31). Answers one of:
--   lost      the row is not running under this lease: nothing written
--   received  (signal) a signal of that name was in the mailbox: taken, its payload returned
--             and stored as the step's value; the row stays running
--   timedOut  (signal) the wait's time has passed: stored as such; the row stays running
--   awake     (sleep) the sleep's time has passed: stored; the row stays running
--   sleeping  the row is `sleeping` until then (history running → sleeping), no attempt spent
--   cancelled a cancel was requested: the row is `cancelled`
create function :JOBVISOR_SCHEMA.suspend_job(p_now timestamptz, p_id bigint, p_token uuid, p_kind text,
  p_name text, p_signal text, p_until timestamptz, p_delay_ms float8)
returns table (answer text, payload jsonb) language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_job record;
  v_until timestamptz;
  v_sig record;
  v_entry jsonb;
  v_error jsonb;
begin
  select j.id, j.attempt, j.worker_id, j.cancel_requested_at into v_job
  from :JOBVISOR_SCHEMA.jobs j where j.id = p_id and j.state = 'running' and j.lease_token = p_token for update;
  if not found then
    return query select 'lost'::text, null::jsonb;
    return;
  end if;
  -- A fresh statement, so a signal committed while this one waited for the row is seen.
  if p_kind = 'signal' then
    select s.id, s.payload into v_sig from :JOBVISOR_SCHEMA.job_signals s
    where s.job_id = p_id and s.name = p_signal order by s.id limit 1;
    if found then
      delete from :JOBVISOR_SCHEMA.job_signals where id = v_sig.id;
      update :JOBVISOR_SCHEMA.jobs set steps = coalesce(steps, '[]') || jsonb_build_array(jsonb_build_object(
        'n', p_name, 'k', 'signal', 's', p_signal, 'r', 'received', 'v', v_sig.payload,
        'a', floor(extract(epoch from v_now) * 1000)))
      where id = p_id;
      return query select 'received'::text, v_sig.payload;
      return;
    end if;
  end if;
  v_until := coalesce(p_until, v_now + p_delay_ms * interval '1 millisecond');
  if v_until <= v_now then
    v_entry := jsonb_build_object('n', p_name, 'k', p_kind, 'a', floor(extract(epoch from v_now) * 1000),
      'u', floor(extract(epoch from v_until) * 1000));
    if p_kind = 'signal' then v_entry := v_entry || jsonb_build_object('s', p_signal, 'r', 'timedOut'); end if;
    update :JOBVISOR_SCHEMA.jobs set steps = coalesce(steps, '[]') || jsonb_build_array(v_entry) where id = p_id;
    return query select case when p_kind = 'signal' then 'timedOut' else 'awake' end, null::jsonb;
    return;
  end if;
  if v_job.cancel_requested_at is not null then
    v_error := jsonb_build_object('code', 'cancelled', 'message', 'cancelled while running');
    update :JOBVISOR_SCHEMA.jobs set state = 'cancelled', lease_token = null, lease_expires_at = null,
      error = v_error, updated_at = v_now, finished_at = v_now
    where id = p_id;
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    values (p_id, 'running', 'cancelled', v_job.attempt, v_job.worker_id, v_now, v_error);
    return query select 'cancelled'::text, null::jsonb;
    return;
  end if;
  v_entry := jsonb_build_object('n', p_name, 'k', p_kind, 'a', floor(extract(epoch from v_now) * 1000),
    'u', floor(extract(epoch from v_until) * 1000));
  if p_kind = 'signal' then v_entry := v_entry || jsonb_build_object('s', p_signal, 'r', 'waiting'); end if;
  v_error := case when p_kind = 'signal'
    then jsonb_build_object('code', 'signal_wait', 'message', format('waits for signal "%s"', p_signal))
    else jsonb_build_object('code', 'sleep', 'message', format('sleeps until %s', v_until)) end;
  -- No attempt spent: the next claim adds one, so one more is allowed.
  update :JOBVISOR_SCHEMA.jobs set state = 'sleeping', run_at = v_until, wait_signal = case when p_kind = 'signal' then p_signal end,
    max_attempts = max_attempts + 1, lease_token = null, lease_expires_at = null, error = null,
    updated_at = v_now, steps = coalesce(steps, '[]') || jsonb_build_array(v_entry)
  where id = p_id;
  insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  values (p_id, 'running', 'sleeping', v_job.attempt, v_job.worker_id, v_now, v_error);
  return query select 'sleeping'::text, null::jsonb;
end $$;
