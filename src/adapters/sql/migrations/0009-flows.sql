-- jobvisor schema, version 9: workflows, jobs that wait for jobs (src/flows,
-- queries/enqueue-flow.ts, queries/flow-reads.ts).
--
-- A job that waits is in its own row state, `waiting`: not claimable (jobs_claim_idx holds
-- pending and retrying rows only), with `open_deps` counting the jobs it still waits for, one
-- `job_deps` edge per job it waits for. When a job that others wait for ends (completed, dead,
-- skipped, cancelled), the trigger below runs inside the statement that ended it: under each
-- waiting dependent's row lock it decrements the counter and makes the job `pending` when it
-- reaches 0, or applies the edge's failure policy when the job did not complete. Two parents
-- ending at once on two workers serialise on the child's row lock, and the second sees the
-- first's count: exactly one of them releases the child. Nothing polls.
--
-- Cost to jobs outside flows: the trigger's WHEN reads `has_dependents` (false) and does not
-- call anything; the new columns have constant defaults (no table rewrite); every new index is
-- partial on flow rows.

alter table :JOBVISOR_SCHEMA.jobs drop constraint jobs_state_check;
-- NOT VALID: every stored row already passes the narrower check; no scan of the table.
alter table :JOBVISOR_SCHEMA.jobs add constraint jobs_state_check
  check (state in ('pending', 'running', 'retrying', 'completed', 'dead', 'skipped', 'cancelled', 'waiting')) not valid;

create table :JOBVISOR_SCHEMA.flows (
  id bigint generated always as identity primary key,
  name text not null,
  created_at timestamptz not null
);

alter table :JOBVISOR_SCHEMA.jobs
  add column flow_id bigint,
  -- The job's name in its flow (a child's key, for children a handler added).
  add column flow_node text,
  -- Jobs this one still waits for, while `waiting`.
  add column open_deps integer not null default 0,
  -- Some job waits or waited for this one: its end runs the trigger.
  add column has_dependents boolean not null default false;

-- `job_id` waits for `dep_id`. `name` is how job_id's handler names dep_id (unique per
-- waiting job: a child key added twice adds nothing); `role`: a static flow's parent, or a
-- child the waiting job's handler added.
create table :JOBVISOR_SCHEMA.job_deps (
  job_id bigint not null,
  dep_id bigint not null,
  name text not null,
  role text not null check (role in ('parent', 'child')),
  on_failure text not null check (on_failure in ('cancel', 'run', 'die')),
  primary key (job_id, name)
);
create index job_deps_dep_idx on :JOBVISOR_SCHEMA.job_deps (dep_id);

create index jobs_flow_idx on :JOBVISOR_SCHEMA.jobs (flow_id, id) where flow_id is not null;
-- The backlog's count of waiting jobs per queue.
create index jobs_waiting_idx on :JOBVISOR_SCHEMA.jobs (queue) where state = 'waiting';

-- The end of job p_dep, in state p_state at p_at, as its waiting dependents see it (only those
-- in p_only when given: enqueue_flow replays the end of a parent that ended before its child
-- existed, for the new children only). The dependents are locked in id order.
create function :JOBVISOR_SCHEMA.release_dependents(p_dep bigint, p_state text, p_at timestamptz, p_only bigint[])
returns void language plpgsql volatile as $$
declare
  d record;
  reason jsonb;
  ended text;
  cur_state text;
  cur_open integer;
begin
  for d in
    select w.id, w.queue, w.attempt, w.open_deps, e.name, e.role, e.on_failure
    from :JOBVISOR_SCHEMA.job_deps e
    join :JOBVISOR_SCHEMA.jobs w on w.id = e.job_id
    where e.dep_id = p_dep and w.state = 'waiting' and (p_only is null or w.id = any(p_only))
    order by w.id
    for update of w
  loop
    -- Read again: an earlier dependent's end, cascading through this trigger inside this
    -- loop, may have ended this one or counted down its parents since the loop's query ran.
    select j.state, j.open_deps into cur_state, cur_open from :JOBVISOR_SCHEMA.jobs j where j.id = d.id;
    continue when cur_state <> 'waiting';
    if p_state = 'completed' or d.on_failure = 'run' then
      if cur_open > 1 then
        update :JOBVISOR_SCHEMA.jobs set open_deps = open_deps - 1 where id = d.id;
      else
        -- The last one: due now. Those that did not complete and were run past go in the
        -- history with the release.
        select jsonb_build_object('code', 'dependency_failed', 'message',
            string_agg(format('%s "%s" (job %s) ended %s', x.role, x.name, p.id, p.state), '; ' order by p.id)
            || '; runs anyway (onFailure: run)')
          into reason
        from :JOBVISOR_SCHEMA.job_deps x join :JOBVISOR_SCHEMA.jobs p on p.id = x.dep_id
        where x.job_id = d.id and (case when p.id = p_dep then p_state else p.state end) <> 'completed';
        if reason ->> 'message' is null then reason := null; end if;
        update :JOBVISOR_SCHEMA.jobs set open_deps = 0, state = 'pending', updated_at = p_at where id = d.id;
        insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
        values (d.id, 'waiting', 'pending', d.attempt, null, p_at, reason);
        perform pg_notify(:JOBVISOR_CHANNEL, d.queue);
      end if;
    else
      ended := case d.on_failure when 'die' then 'dead' else 'cancelled' end;
      reason := jsonb_build_object('code', 'dependency_failed', 'message',
        format('%s "%s" (job %s) ended %s; %s (onFailure: %s)', d.role, d.name, p_dep, p_state,
          case ended when 'dead' then 'dies' else 'cancelled' end, d.on_failure));
      -- An update of state: this job's own dependents follow through this trigger.
      update :JOBVISOR_SCHEMA.jobs
      set state = ended, open_deps = open_deps - 1, error = reason, finished_at = p_at, updated_at = p_at
      where id = d.id;
      insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
      values (d.id, 'waiting', ended, d.attempt, null, p_at, reason);
    end if;
  end loop;
end
$$;

-- Every writer of an end sets updated_at to its "now" in the same update: the trigger takes
-- its time from there, so tests' injected clocks hold for the dependents too.
create function :JOBVISOR_SCHEMA.jobs_release_dependents() returns trigger language plpgsql as $$
begin
  perform :JOBVISOR_SCHEMA.release_dependents(new.id, new.state, new.updated_at, null);
  return null;
end
$$;

create trigger jobs_release_dependents
after update of state on :JOBVISOR_SCHEMA.jobs
for each row
when (new.has_dependents and old.state is distinct from new.state
  and new.state in ('completed', 'dead', 'skipped', 'cancelled'))
execute function :JOBVISOR_SCHEMA.jobs_release_dependents();

-- A static flow (checked by the library: names, cycles, options), all or nothing, in the
-- caller's transaction if it runs in one. p_jobs: one object per job as queries/enqueue-flow.ts
-- makes them, parents by index into p_jobs or by stored id. Returns the flow's jobs in input
-- order (ids are drawn in that order).
create function :JOBVISOR_SCHEMA.enqueue_flow(p_now timestamptz, p_name text, p_jobs jsonb)
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
  select x into v_missing from unnest(v_stored) x
  where not exists (select from :JOBVISOR_SCHEMA.jobs j where j.id = x) limit 1;
  if v_missing is not null then
    raise exception 'enqueue_flow: no job with id %', v_missing using errcode = 'JV404';
  end if;

  -- Stored parents are locked before their state is read: one that ends meanwhile either
  -- ends before this lock (and is replayed below) or after this transaction commits (and its
  -- trigger sees these edges).
  update :JOBVISOR_SCHEMA.jobs set has_dependents = true
  where id in (select e.dep_id from :JOBVISOR_SCHEMA.job_deps e where e.job_id = any(v_ids));
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

-- The outcome `waiting` of one attempt, fenced by its lease: the children the handler added
-- (those whose key is new), the row waiting for every child that has not ended, or pending at
-- once when none is left, with one more attempt allowed. Returns the row's new state, or null
-- when the fence refused (the row is not running under p_token).
create function :JOBVISOR_SCHEMA.wait_for_children(p_now timestamptz, p_id bigint, p_token text, p_children jsonb)
returns text language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_job :JOBVISOR_SCHEMA.jobs;
  v_flow bigint;
  v_child jsonb;
  v_id bigint;
  v_open integer;
  v_state text;
begin
  select * into v_job from :JOBVISOR_SCHEMA.jobs
  where id = p_id and state = 'running' and lease_token::text = p_token for update;
  if not found then return null; end if;
  if v_job.cancel_requested_at is not null then
    -- As a retry would: the request wins, and nothing is added.
    update :JOBVISOR_SCHEMA.jobs
    set state = 'cancelled', error = '{"code": "cancelled", "message": "cancelled by request"}',
      finished_at = v_now, lease_token = null, lease_expires_at = null, updated_at = v_now
    where id = p_id;
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    values (p_id, 'running', 'cancelled', v_job.attempt, v_job.worker_id, v_now,
      '{"code": "cancelled", "message": "cancelled by request"}');
    return 'cancelled';
  end if;
  v_flow := v_job.flow_id;
  if v_flow is null then
    insert into :JOBVISOR_SCHEMA.flows (name, created_at) values (v_job.kind, v_now) returning id into v_flow;
  end if;
  for v_child in select x.value from jsonb_array_elements(p_children) with ordinality x order by x.ordinality loop
    continue when exists (select from :JOBVISOR_SCHEMA.job_deps where job_id = p_id and name = v_child ->> 'key');
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts,
      concurrency_key, expires_at, trace_context, created_at, updated_at, flow_id, flow_node, has_dependents)
    values (v_child ->> 'queue', v_child ->> 'kind', coalesce(v_child -> 'payload', 'null'),
      coalesce((v_child ->> 'priority')::int, 0), coalesce((v_child ->> 'run_at')::timestamptz, v_now),
      (v_child ->> 'max_attempts')::int, v_child ->> 'concurrency_key', (v_child ->> 'expires_at')::timestamptz,
      case when jsonb_typeof(v_child -> 'trace_context') = 'object' then v_child -> 'trace_context' end,
      v_now, v_now, v_flow, v_child ->> 'key', true)
    returning id into v_id;
    insert into :JOBVISOR_SCHEMA.job_deps (job_id, dep_id, name, role, on_failure)
    values (p_id, v_id, v_child ->> 'key', 'child', v_child ->> 'on_failure');
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    values (v_id, null, 'pending', 0, null, v_now, null);
    perform pg_notify(:JOBVISOR_CHANNEL, v_child ->> 'queue');
  end loop;
  select count(*) into v_open
  from :JOBVISOR_SCHEMA.job_deps e join :JOBVISOR_SCHEMA.jobs c on c.id = e.dep_id
  where e.job_id = p_id and e.role = 'child' and c.state not in ('completed', 'dead', 'skipped', 'cancelled');
  v_state := case when v_open > 0 then 'waiting' else 'pending' end;
  update :JOBVISOR_SCHEMA.jobs
  set state = v_state, open_deps = v_open, flow_id = v_flow, flow_node = coalesce(flow_node, kind), max_attempts = max_attempts + 1,
    run_at = v_now, error = null, lease_token = null, lease_expires_at = null, updated_at = v_now
  where id = p_id;
  insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
  values (p_id, 'running', v_state, v_job.attempt, v_job.worker_id, v_now, null);
  if v_state = 'pending' then perform pg_notify(:JOBVISOR_CHANNEL, v_job.queue); end if;
  return v_state;
end
$$;
