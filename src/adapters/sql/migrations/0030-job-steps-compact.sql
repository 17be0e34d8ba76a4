-- jobvisor:breaking
-- jobvisor schema, version 30: job_steps' rows and index entries made smaller (issue 23's WAL
-- target: a job of 10 steps at most half the WAL of DBOS Transact's workflow of 10 steps).
--
-- Every step's checkpoint inserts one row and one index entry, so their sizes are its WAL:
-- - 8 columns, not 9: a 1-byte null bitmap keeps the tuple header at 24 bytes (9 columns
--   need 2 bytes, which push it to 32); the fixed-width columns first, so none is padded to
--   its boundary after a text; and `kind` is one byte that also says a wait's status:
--     s  a step (value: its result)
--     z  a sleep (until: its end)
--     w  a signal wait, waiting (until: its timeout; 9999-12-31 for none)
--     r  a signal wait that received its signal (value: the payload)
--     t  a signal wait that timed out
-- - `value` is json (the text as the handler's JSON.stringify wrote it), not jsonb: nothing
--   queries into it, and jsonb's binary form is larger for small values (a number: 17 bytes
--   against 2; a small object about 5 more). It is read back as jsonb.
-- - job_steps_job_idx is on job_id alone (16-byte entries, not 24); a job's few rows are
--   sorted by id when read. Deduplication off: a job's entries arrive one by one among other
--   jobs', and each insert into a posting list would log the whole list again.
--
-- Breaking (schema-version.ts): a build before this one reads job_steps.status, which is gone.

create table :JOBVISOR_SCHEMA.job_steps_compact (
  job_id bigint not null,
  id bigint generated always as identity,
  at timestamptz not null,
  until timestamptz,
  kind "char" not null,
  name text not null,      -- the call's key in its run: charge, charge#2
  value json,
  signal text              -- the signal a wait is for
);

-- In their order: ids are drawn anew, in the order of the old ones.
insert into :JOBVISOR_SCHEMA.job_steps_compact (job_id, at, until, kind, name, value, signal)
select job_id, at, until,
  case kind when 'step' then 's' when 'sleep' then 'z'
    else case status when 'received' then 'r' when 'timedOut' then 't' else 'w' end end,
  name, value, signal
from :JOBVISOR_SCHEMA.job_steps
where kind in ('step', 'sleep', 'signal')
order by id;

drop table :JOBVISOR_SCHEMA.job_steps;
alter table :JOBVISOR_SCHEMA.job_steps_compact rename to job_steps;
create index job_steps_job_idx on :JOBVISOR_SCHEMA.job_steps (job_id) with (deduplicate_items = off);

-- 0027's, writing the kinds above, and finding its job by primary key whatever the statistics say.
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
  -- The id and lease token only, the state tested on the row locked: with `state =
  -- 'running'` in the lookup, jobs_lease_expiry_idx (running rows only) can answer it too, and
  -- on a table analyzed while few of its rows ran (mostly sleeping or finished jobs) the
  -- planner took that index for empty and read through every running job to find this one.
  select j.id, j.state, j.attempt, j.worker_id, j.cancel_requested_at into v_job
  from :JOBVISOR_SCHEMA.jobs j where j.id = p_id and j.lease_token = p_token for update;
  if not found or v_job.state <> 'running' then
    return query select 'lost'::text, null::jsonb;
    return;
  end if;
  -- A fresh statement, so a signal committed while this one waited for the row is seen.
  if p_kind = 'signal' then
    select s.id, s.payload into v_sig from :JOBVISOR_SCHEMA.job_signals s
    where s.job_id = p_id and s.name = p_signal order by s.id limit 1;
    if found then
      delete from :JOBVISOR_SCHEMA.job_signals where id = v_sig.id;
      insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, value, signal)
      values (p_id, 'r', p_name, v_now, v_sig.payload, p_signal);
      return query select 'received'::text, v_sig.payload;
      return;
    end if;
  end if;
  v_until := coalesce(p_until, v_now + p_delay_ms * interval '1 millisecond');
  if v_until <= v_now then
    insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, until, signal)
    values (p_id, case when p_kind = 'signal' then 't' else 'z' end, p_name, v_now, v_until,
      case when p_kind = 'signal' then p_signal end);
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
  insert into :JOBVISOR_SCHEMA.job_steps (job_id, kind, name, at, until, signal)
  values (p_id, case when p_kind = 'signal' then 'w' else 'z' end, p_name, v_now, v_until,
    case when p_kind = 'signal' then p_signal end);
  insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  values (p_id, 'running', 'sleeping', v_job.attempt, v_job.worker_id, v_now, v_error);
  return query select 'sleeping'::text, null::jsonb;
end $$;

