-- jobvisor schema, version 29: suspend_job finds its job by primary key whatever the statistics say.
--
-- 0027's suspend_job locked its row with `id = p_id and state = 'running' and lease_token =
-- p_token`. `state = 'running'` lets jobs_lease_expiry_idx (running rows only) answer that as
-- well as the primary key, and on a table analyzed while few of its rows ran (mostly sleeping
-- or finished jobs: 100,000 sleepers, a long history) the statistics hold that index for
-- empty: the planner took it, and each sleep or signal wait read through every running job
-- to find its own (1,000 entries beside 1,000 running jobs, against one). The lookup now
-- names the id and the lease token only, which no partial index's predicate follows from,
-- and the state is tested on the row locked: the same fence (a row under another lease is
-- neither locked nor changed, one that holds this lease but no longer runs is answered
-- 'lost'). The batched outcomes had the same lookup (queries/set-states-if-running.ts).

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
