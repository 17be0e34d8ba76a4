-- jobvisor:breaking
-- jobvisor schema, version 27: a durable job's steps in a table of their own (issue 23).
--
-- 0017 kept them in jobs.steps (jsonb), appended by an UPDATE of the job's row: each
-- checkpoint wrote a new version of the whole row, carrying every step before it, so the
-- tenth step of a job wrote the nine before it again (594 WAL bytes and ~400 µs of server CPU
-- a step in the bench, more than a plain job's whole life). Now a step is one small row,
-- inserted: the checkpoint reads the job's row to fence it (FOR SHARE: a rescue or cancel
-- that ends the lease waits for it, or it sees the lease gone) and never rewrites it. One
-- column per field of 0017's entries ({n, k, a, v, u, s, r}), which is smaller than a jsonb
-- object holding them; `id` orders a job's entries (a later entry of a name supersedes an
-- earlier one, as before).
--
-- No primary key and no foreign key: steps are read by job (job_steps_job_idx), and a
-- foreign key would check and lock the job's row on every insert. A job's steps go with it
-- by the statement trigger below, whatever deletes the job (pruning, deleteJob).
--
-- Breaking (schema-version.ts): a build before this one reads and writes jobs.steps, which
-- is gone; it would run every stored step again.

create table :JOBVISOR_SCHEMA.job_steps (
  job_id bigint not null,
  id bigint generated always as identity,
  kind text not null,      -- step | sleep | signal
  name text not null,      -- the call's key in its run: charge, charge#2
  at timestamptz not null,
  value jsonb,             -- a step's result; a received signal's payload
  until timestamptz,       -- a sleep's or a wait's end (9999-12-31: a wait with no timeout)
  signal text,             -- the signal a wait is for
  status text              -- a wait's: waiting | received | timedOut
);
create index job_steps_job_idx on :JOBVISOR_SCHEMA.job_steps (job_id, id);

-- 0017's entries, in order; one that no version of the library wrote (readers left those out) is
-- left behind.
insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, value, until, signal, status)
select j.id, e.entry ->> 'k', e.entry ->> 'n', to_timestamp((e.entry ->> 'a')::float8 / 1000), e.entry -> 'v',
  case when jsonb_typeof(e.entry -> 'u') = 'number' and abs((e.entry ->> 'u')::float8) < 1e15
    then to_timestamp((e.entry ->> 'u')::float8 / 1000) end,
  e.entry ->> 's', e.entry ->> 'r'
from :JOBVISOR_SCHEMA.jobs j
cross join lateral jsonb_array_elements(case when jsonb_typeof(j.steps) = 'array' then j.steps else '[]' end)
  with ordinality as e(entry, n)
where jsonb_typeof(e.entry) = 'object' and jsonb_typeof(e.entry -> 'n') = 'string' and jsonb_typeof(e.entry -> 'k') = 'string'
  and jsonb_typeof(e.entry -> 'a') = 'number' and abs((e.entry ->> 'a')::float8) < 1e15
order by j.id, e.n;

alter table :JOBVISOR_SCHEMA.jobs drop column steps;

create function :JOBVISOR_SCHEMA.jobs_delete_steps() returns trigger
language plpgsql as $$
begin
  delete from :JOBVISOR_SCHEMA.job_steps s using gone_jobs g where s.job_id = g.id;
  return null;
end;
$$;

create trigger jobs_delete_steps after delete on :JOBVISOR_SCHEMA.jobs
  referencing old table as gone_jobs
  for each statement execute function :JOBVISOR_SCHEMA.jobs_delete_steps();

-- 0017's, but each entry is a row of job_steps.
create or replace function :JOBVISOR_SCHEMA.suspend_job(p_now timestamptz, p_id bigint, p_token uuid, p_kind text,
  p_name text, p_signal text, p_until timestamptz, p_delay_ms float8)
returns table (answer text, payload jsonb) language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_job record;
  v_until timestamptz;
  v_sig record;
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
      insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, value, signal, status)
      values (p_id, 'signal', p_name, v_now, v_sig.payload, p_signal, 'received');
      return query select 'received'::text, v_sig.payload;
      return;
    end if;
  end if;
  v_until := coalesce(p_until, v_now + p_delay_ms * interval '1 millisecond');
  if v_until <= v_now then
    insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, until, signal, status)
    values (p_id, p_kind, p_name, v_now, v_until, case when p_kind = 'signal' then p_signal end,
      case when p_kind = 'signal' then 'timedOut' end);
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
  v_error := case when p_kind = 'signal'
    then jsonb_build_object('code', 'signal_wait', 'message', format('waits for signal "%s"', p_signal))
    else jsonb_build_object('code', 'sleep', 'message', format('sleeps until %s', v_until)) end;
  -- No attempt spent: the next claim adds one, so one more is allowed.
  update :JOBVISOR_SCHEMA.jobs set state = 'sleeping', run_at = v_until, wait_signal = case when p_kind = 'signal' then p_signal end,
    max_attempts = max_attempts + 1, lease_token = null, lease_expires_at = null, error = null,
    updated_at = v_now
  where id = p_id;
  insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, until, signal, status)
  values (p_id, p_kind, p_name, v_now, v_until, case when p_kind = 'signal' then p_signal end,
    case when p_kind = 'signal' then 'waiting' end);
  insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  values (p_id, 'running', 'sleeping', v_job.attempt, v_job.worker_id, v_now, v_error);
  return query select 'sleeping'::text, null::jsonb;
end $$;

