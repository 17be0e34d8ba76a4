-- jobvisor schema, version 18: flows after a failure (docs/workflows.md, "Retrying a flow").
--
-- 1. A parent's end is counted once per edge. `job_deps.ended` says the waiting job's count
-- has taken this edge's end: the trigger of 0009 skips an edge already ended, so a parent that
-- failed (counted, onFailure 'run') and is then retried and completes is not counted again.
-- retry_jobs below opens the edges of a job it revives again, and the trigger counts its next
-- end.
alter table :JOBVISOR_SCHEMA.job_deps add column ended boolean not null default false;

-- What each stored edge has seen: a parent that has ended has been counted by its dependents.
-- Waiting jobs get their count again from their edges, which also mends a count that a
-- parent's retry let down twice before this version.
update :JOBVISOR_SCHEMA.job_deps e set ended = true
from :JOBVISOR_SCHEMA.jobs p
where p.id = e.dep_id and p.state in ('completed', 'dead', 'skipped', 'cancelled');
update :JOBVISOR_SCHEMA.jobs w
set open_deps = (select count(*) from :JOBVISOR_SCHEMA.job_deps e where e.job_id = w.id and not e.ended)
where w.state = 'waiting';

-- As in 0009, but for edges not ended yet, each marked ended as it is counted.
create or replace function :JOBVISOR_SCHEMA.release_dependents(p_dep bigint, p_state text, p_at timestamptz, p_only bigint[])
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
    where e.dep_id = p_dep and not e.ended and w.state = 'waiting' and (p_only is null or w.id = any(p_only))
    order by w.id
    for update of w
  loop
    -- Read again: an earlier dependent's end, cascading through this trigger inside this
    -- loop, may have ended this one or counted down its parents since the loop's query ran.
    select j.state, j.open_deps into cur_state, cur_open from :JOBVISOR_SCHEMA.jobs j where j.id = d.id;
    continue when cur_state <> 'waiting';
    update :JOBVISOR_SCHEMA.job_deps set ended = true where job_id = d.id and name = d.name;
    if p_state = 'completed' or d.on_failure = 'run' then
      if cur_open > 1 then
        update :JOBVISOR_SCHEMA.jobs set open_deps = open_deps - 1 where id = d.id;
      else
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
      update :JOBVISOR_SCHEMA.jobs
      set state = ended, open_deps = open_deps - 1, error = reason, finished_at = p_at, updated_at = p_at
      where id = d.id;
      insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
      values (d.id, 'waiting', ended, d.attempt, null, p_at, reason);
    end if;
  end loop;
end
$$;

-- 2. Retry by hand, flows included (queries/retry-job.ts): the dead, cancelled or skipped jobs
-- of p_seeds (those whose unique key no live job holds) and, with p_cascade, every job that
-- ended cancelled or dead because one of them failed (code dependency_failed), transitively.
-- A job stays as it is while a parent outside that set has failed under an edge that is not
-- 'run' (it would end again at once); so does what depends on it. Each revived job waits
-- (`waiting`) for its parents and children that have not ended, counting only those, or is due
-- at once. The jobs that wait for a revived one (`waiting`), or were released by its end and
-- not claimed yet (`pending`), wait for it again. Returns each job moved, with its states.
create function :JOBVISOR_SCHEMA.retry_jobs(p_now timestamptz, p_seeds bigint[], p_cascade boolean)
returns table (r_id bigint, r_from text, r_to text) language plpgsql volatile as $$
declare
  v_now constant timestamptz := coalesce(p_now, now());
  v_set bigint[];
  v_more bigint[];
  v_out bigint[];
  v_deps bigint[];
  v_back bigint[];
begin
  select coalesce(array_agg(x.id), '{}') into v_set from (
    select t.id from :JOBVISOR_SCHEMA.jobs t
    where t.id = any(p_seeds) and t.state in ('dead', 'cancelled', 'skipped')
      and not exists (
        select from :JOBVISOR_SCHEMA.jobs l
        where l.queue = t.queue and l.unique_key = t.unique_key
          and l.state in ('pending', 'retrying', 'running', 'sleeping'))
    order by t.id for update of t) x;
  if p_cascade then
    loop
      select coalesce(array_agg(distinct e.job_id), '{}') into v_more
      from :JOBVISOR_SCHEMA.job_deps e join :JOBVISOR_SCHEMA.jobs w on w.id = e.job_id
      where e.dep_id = any(v_set) and not (w.id = any(v_set))
        and w.state in ('dead', 'cancelled') and w.error ->> 'code' = 'dependency_failed';
      exit when cardinality(v_more) = 0;
      -- Locked, then read again: only what is still as it was.
      select coalesce(array_agg(x.id), '{}') into v_more from (
        select w.id from :JOBVISOR_SCHEMA.jobs w
        where w.id = any(v_more) and w.state in ('dead', 'cancelled') and w.error ->> 'code' = 'dependency_failed'
        order by w.id for update of w) x;
      exit when cardinality(v_more) = 0;
      v_set := v_set || v_more;
    end loop;
  end if;
  -- Left out, to a fixed point: a job with a failed parent (or child) outside the set under an
  -- edge that is not 'run'.
  loop
    select coalesce(array_agg(n), '{}') into v_out from unnest(v_set) n
    where exists (
      select from :JOBVISOR_SCHEMA.job_deps e join :JOBVISOR_SCHEMA.jobs p on p.id = e.dep_id
      where e.job_id = n and e.on_failure <> 'run' and p.state in ('dead', 'cancelled', 'skipped')
        and not (p.id = any(v_set)));
    exit when cardinality(v_out) = 0;
    v_set := array(select unnest(v_set) except select unnest(v_out));
  end loop;
  if cardinality(v_set) = 0 then return; end if;

  -- The jobs that depend on a revived one and have not ended, locked: a running one may be
  -- about to wait for its children (wait_for_children locks it first), and counts them after.
  select coalesce(array_agg(x.id), '{}') into v_deps from (
    select w.id from :JOBVISOR_SCHEMA.jobs w
    where w.id in (select e.job_id from :JOBVISOR_SCHEMA.job_deps e where e.dep_id = any(v_set))
      and not (w.id = any(v_set)) and w.state not in ('completed', 'dead', 'skipped', 'cancelled')
    order by w.id for update of w) x;
  -- Of those, the waiting ones, and those released and not claimed yet, wait again.
  select coalesce(array_agg(w.id), '{}') into v_back from :JOBVISOR_SCHEMA.jobs w
  where w.id = any(v_deps) and w.state in ('waiting', 'pending');

  -- An edge has ended when its job has ended and is not revived here (a job deleted since counts
  -- as ended, as it did when it went).
  update :JOBVISOR_SCHEMA.job_deps e
  set ended = not exists (
    select from :JOBVISOR_SCHEMA.jobs p
    where p.id = e.dep_id and (p.id = any(v_set) or p.state not in ('completed', 'dead', 'skipped', 'cancelled')))
  where e.job_id = any(v_set || v_deps);

  return query
  with counted as (
    select j.id, j.state as from_state,
      (select count(*) from :JOBVISOR_SCHEMA.job_deps e where e.job_id = j.id and not e.ended)::int as open,
      (select string_agg(format('%s "%s" (job %s)', e.role, e.name, e.dep_id), ', ' order by e.dep_id)
        from :JOBVISOR_SCHEMA.job_deps e where e.job_id = j.id and e.dep_id = any(v_set)) as retried_deps
    from :JOBVISOR_SCHEMA.jobs j where j.id = any(v_set || v_back)
  ),
  moved as (
    update :JOBVISOR_SCHEMA.jobs j
    set state = case when c.open > 0 then 'waiting' else 'pending' end, open_deps = c.open, updated_at = v_now,
      run_at = case when j.id = any(v_set) then v_now else j.run_at end,
      finished_at = case when j.id = any(v_set) then null else j.finished_at end,
      max_attempts = case when j.id = any(v_set) then greatest(j.max_attempts, j.attempt + 1) else j.max_attempts end,
      cancel_requested_at = case when j.id = any(v_set) then null else j.cancel_requested_at end,
      expires_at = case when j.id = any(v_set) and j.expires_at <= v_now then null else j.expires_at end
    from counted c
    where j.id = c.id
    returning j.id, c.from_state, j.state, j.attempt, j.queue, c.retried_deps
  ),
  history as (
    insert into :JOBVISOR_SCHEMA.job_events (job_id, from_state, to_state, attempt, worker_id, at, error)
    select m.id, m.from_state, m.state, m.attempt, null, v_now,
      case when not (m.id = any(v_set)) then jsonb_build_object('code', 'dependency_retried',
        'message', format('%s retried; waits for it again', m.retried_deps)) end
    from moved m where m.from_state <> m.state
  )
  select m.id, m.from_state, m.state from moved m
    left join lateral (select pg_notify(:JOBVISOR_CHANNEL, m.queue) where m.state = 'pending') notified on true
  where m.from_state <> m.state;
end
$$;
