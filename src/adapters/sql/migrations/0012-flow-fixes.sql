-- jobvisor schema, version 12: two fixes to flows (migration 0009).
--
-- 1. The reaper ends a job that waits once its deadline across all attempts (`expires_at`)
-- has passed, as it ends a pending one.
--
-- Before, a waiting job past its deadline stayed waiting until its parents ended, and the jobs
-- that wait for it waited as long. Now it goes to `dead` (code `expired`) at the next reaper
-- pass, and the jobs waiting for it follow their onFailure policy through the trigger of 0009.
-- The reaper finds such jobs through jobs_expiry_idx, which until now held only pending and
-- retrying rows: it is made again to hold waiting rows with a deadline too. Only jobs with a
-- deadline are in it.
drop index :JOBVISOR_SCHEMA.jobs_expiry_idx;
create index jobs_expiry_idx on :JOBVISOR_SCHEMA.jobs (expires_at)
  where expires_at is not null and state in ('pending', 'retrying', 'waiting');

-- 2. enqueue_flow checks that its stored parents exist after it has locked them, not before: a
-- parent deleted (deleteJob) in between left the new job waiting for a job that was gone. The
-- function is as in 0009 but for that order.
create or replace function :JOBVISOR_SCHEMA.enqueue_flow(p_now timestamptz, p_name text, p_jobs jsonb)
returns setof :JOBVISOR_SCHEMA.jobs language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_flow bigint;
  v_ids bigint[] := '{}';
  v_id bigint;
  v_job jsonb;
  v_stored bigint[];
  v_missing bigint;
  v_parent record;
begin
  insert into :JOBVISOR_SCHEMA.flows (name, created_at) values (p_name, v_now) returning id into v_flow;
  for v_job in select x.value from jsonb_array_elements(p_jobs) with ordinality x order by x.ordinality loop
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, state, priority, run_at, max_attempts,
      concurrency_key, expires_at, trace_context, created_at, updated_at, flow_id, flow_node, open_deps)
    values (v_job ->> 'queue', v_job ->> 'kind', coalesce(v_job -> 'payload', 'null'),
      case when jsonb_array_length(v_job -> 'depends_on') > 0 then 'waiting' else 'pending' end,
      coalesce((v_job ->> 'priority')::int, 0), coalesce((v_job ->> 'run_at')::timestamptz, v_now),
      (v_job ->> 'max_attempts')::int, v_job ->> 'concurrency_key', (v_job ->> 'expires_at')::timestamptz,
      case when jsonb_typeof(v_job -> 'trace_context') = 'object' then v_job -> 'trace_context' end,
      v_now, v_now, v_flow, v_job ->> 'node', jsonb_array_length(v_job -> 'depends_on'))
    returning id into v_id;
    v_ids := v_ids || v_id;
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    select v_id, null, state, 0, null, v_now, null from :JOBVISOR_SCHEMA.jobs where id = v_id;
  end loop;

  insert into :JOBVISOR_SCHEMA.job_deps (job_id, dep_id, name, role, on_failure)
  select v_ids[j.ordinality], coalesce(v_ids[(d.value ->> 'index')::int + 1], (d.value ->> 'job_id')::bigint),
    d.value ->> 'name', 'parent', d.value ->> 'on_failure'
  from jsonb_array_elements(p_jobs) with ordinality j
  cross join jsonb_array_elements(j.value -> 'depends_on') d;

  select array_agg(distinct e.dep_id) into v_stored
  from :JOBVISOR_SCHEMA.job_deps e where e.job_id = any(v_ids) and not (e.dep_id = any(v_ids));
  -- Stored parents are locked before their state is read: one that ends meanwhile either
  -- ends before this lock (and is replayed below) or after this transaction commits (and its
  -- trigger sees these edges).
  update :JOBVISOR_SCHEMA.jobs set has_dependents = true
  where id in (select e.dep_id from :JOBVISOR_SCHEMA.job_deps e where e.job_id = any(v_ids));
  -- Checked after that lock, in a statement of its own (a fresh snapshot): a stored parent
  -- deleted while this waited for its lock is seen gone, and the flow is refused.
  select x into v_missing from unnest(v_stored) x
  where not exists (select from :JOBVISOR_SCHEMA.jobs j where j.id = x) limit 1;
  if v_missing is not null then
    raise exception 'enqueue_flow: no job with id %', v_missing using errcode = 'JV404';
  end if;
  for v_parent in
    select j.id, j.state, j.finished_at from :JOBVISOR_SCHEMA.jobs j
    where j.id = any(v_stored) and j.state in ('completed', 'dead', 'skipped', 'cancelled')
    order by j.id
  loop
    perform :JOBVISOR_SCHEMA.release_dependents(v_parent.id, v_parent.state, v_now, v_ids);
  end loop;

  perform pg_notify(:JOBVISOR_CHANNEL, q.queue)
  from (select distinct queue from :JOBVISOR_SCHEMA.jobs where id = any(v_ids) and state = 'pending') q;
  return query select * from :JOBVISOR_SCHEMA.jobs where id = any(v_ids) order by id;
end
$$;
