-- jobvisor schema, version 32: the SQL functions that create jobs write no creation row
-- (issue 26), as the library's own enqueue statements no longer do: a job's creation is read
-- from its row (created_at; the state it was created in is the one its first transition
-- left, or the state it is in). enqueue_keyed (every SQL enqueue(), and the library's keyed,
-- debounced, replacing and fair enqueues), enqueue_flow and wait_for_children are as in
-- 0020, 0012 and 0009 but for that insert. Jobs created before keep their creation row, which
-- every reader takes as it is.
--
-- Not breaking: a build before this one reads these jobs' stories without their first line.

create or replace function :JOBVISOR_SCHEMA.enqueue_keyed(
  p_now timestamptz, p_queue text, p_kind text, p_payload jsonb, p_priority integer, p_run_at timestamptz,
  p_max_attempts integer, p_unique_key text, p_concurrency_key text, p_expires_at timestamptz,
  p_trace_context jsonb, p_on_conflict text, p_debounce_key text, p_debounce_until timestamptz,
  p_fair boolean, p_tenant text, p_weight float8,
  out created boolean, out replaced boolean, out job :JOBVISOR_SCHEMA.jobs)
language plpgsql volatile as $$
declare
  v_id bigint;
  v_holder :JOBVISOR_SCHEMA.jobs;
  v_error jsonb;
  v_rank float8;
begin
  created := false;
  replaced := false;
  if p_fair then
    v_rank := :JOBVISOR_SCHEMA.next_fair_rank(p_queue, p_tenant, p_weight);
  end if;
  if p_debounce_key is not null then
    -- One statement: a concurrent enqueue of the key waits on the row's lock and updates the
    -- row this one inserted; a claim that takes the row first makes this an insert.
    insert into :JOBVISOR_SCHEMA.jobs as j (queue, kind, payload, priority, run_at, max_attempts, concurrency_key,
      expires_at, trace_context, created_at, updated_at, debounce_key, debounce_until, tenant, fair_rank)
    values (p_queue, p_kind, p_payload, p_priority, least(p_run_at, p_debounce_until), p_max_attempts, p_concurrency_key,
      p_expires_at, p_trace_context, p_now, p_now, p_debounce_key, p_debounce_until, p_tenant, v_rank)
    on conflict (queue, debounce_key) where debounce_key is not null and state = 'pending' and attempt = 0
    do update set kind = excluded.kind, payload = excluded.payload, priority = excluded.priority,
      run_at = least(excluded.run_at, j.debounce_until), max_attempts = excluded.max_attempts,
      concurrency_key = excluded.concurrency_key, expires_at = excluded.expires_at,
      trace_context = excluded.trace_context, updated_at = p_now
    returning j.id, j.xmax = 0 into v_id, created;
  elsif p_unique_key is null then
    insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, concurrency_key,
      expires_at, trace_context, created_at, updated_at, tenant, fair_rank)
    values (p_queue, p_kind, p_payload, p_priority, p_run_at, p_max_attempts, p_concurrency_key,
      p_expires_at, p_trace_context, p_now, p_now, p_tenant, v_rank)
    returning id into v_id;
    created := true;
  else
    -- A holder that committed after the insert looked, or ended before the look-up, sends it
    -- round again; so does one this call cancelled.
    for tries in 1..3 loop
      insert into :JOBVISOR_SCHEMA.jobs (queue, kind, payload, priority, run_at, max_attempts, unique_key,
        concurrency_key, expires_at, trace_context, created_at, updated_at, tenant, fair_rank)
      values (p_queue, p_kind, p_payload, p_priority, p_run_at, p_max_attempts, p_unique_key,
        p_concurrency_key, p_expires_at, p_trace_context, p_now, p_now, p_tenant, v_rank)
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
  perform pg_notify(:JOBVISOR_CHANNEL, p_queue);
end
$$;

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

create or replace function :JOBVISOR_SCHEMA.wait_for_children(p_now timestamptz, p_id bigint, p_token text, p_children jsonb)
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
