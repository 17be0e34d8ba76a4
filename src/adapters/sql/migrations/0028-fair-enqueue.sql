-- jobvisor schema, version 28: a bulk enqueue to a fair queue as one set-based statement.
--
-- 0020 ranked each job of a fair queue as it went in, one at a time through enqueue_keyed:
-- a probe of the queue's frontier and an upsert of its tenant's row per job, then an insert,
-- a read back, a history row and a NOTIFY per job. Now the statement of a bulk enqueue
-- (queries/enqueue-fair-jobs.ts) reads the frontier once per queue, takes each tenant's ranks
-- for all of its jobs of the call at once (next_fair_ranks: one write of the tenant's row),
-- and inserts every job in one INSERT. The ranks are the ones 0020 gives the same jobs
-- enqueued one after another: within a call the frontier can only move when no ranked job
-- was waiting, and then only to the call's first rank (next_fair_ranks says why).
--
-- And the frontier's probe reads indexes again: 0022 dropped sleeping jobs from
-- jobs_fair_claim_idx, which left the probe (pending, retrying or sleeping) a scan of the
-- queue's rows. Sleeping ranked jobs get a small index of their own.

create index jobs_fair_sleeping_idx on :JOBVISOR_SCHEMA.jobs (queue, fair_rank)
  where fair_rank is not null and state = 'sleeping';

-- The lowest rank of the queue still waiting to be claimed (pending, retrying or sleeping), or
-- null: the first entry of jobs_fair_claim_idx and of jobs_fair_sleeping_idx. PL/pgSQL, as the
-- functions below: a session plans its statements once, where an SQL function's are planned
-- again at every call.
create function :JOBVISOR_SCHEMA.fair_waiting_rank(p_queue text)
returns float8 language plpgsql stable as $$
begin
  return least(
    (select j.fair_rank from :JOBVISOR_SCHEMA.jobs j
     where j.queue = p_queue and j.fair_rank is not null and j.state in ('pending', 'retrying')
     order by j.fair_rank limit 1),
    (select j.fair_rank from :JOBVISOR_SCHEMA.jobs j
     where j.queue = p_queue and j.fair_rank is not null and j.state = 'sleeping'
     order by j.fair_rank limit 1));
end
$$;

-- The ranks of a tenant's next jobs, one per weight (in the order the jobs are enqueued), and
-- its row set to the last. The first is after the tenant's last rank by 1 / its weight, never
-- below p_frontier (a new tenant's is p_frontier); each next is after the one before by
-- 1 / its weight. That is next_fair_rank's rule applied job by job: the frontier it reads for
-- each is p_frontier still, as every rank handed out is at or above it. The tenant's row is
-- locked to the caller's commit, as next_fair_rank's upsert locks it.
create function :JOBVISOR_SCHEMA.next_fair_ranks(p_queue text, p_tenant text, p_weights float8[], p_frontier float8)
returns float8[] language plpgsql volatile as $$
declare
  v_last float8;
  v_known boolean;
  v_ranks float8[];
begin
  for tries in 1..3 loop
    select t.last_rank into v_last from :JOBVISOR_SCHEMA.tenant_ranks t
    where t.queue = p_queue and t.tenant = coalesce(p_tenant, '')
    for update;
    v_known := found;
    v_ranks := array[case when v_known then greatest(v_last + 1 / p_weights[1], p_frontier) else p_frontier end];
    for k in 2..cardinality(p_weights) loop
      v_ranks[k] := v_ranks[k - 1] + 1 / p_weights[k];
    end loop;
    if v_known then
      update :JOBVISOR_SCHEMA.tenant_ranks set last_rank = v_ranks[cardinality(v_ranks)]
      where queue = p_queue and tenant = coalesce(p_tenant, '');
      return v_ranks;
    end if;
    insert into :JOBVISOR_SCHEMA.tenant_ranks (queue, tenant, last_rank)
    values (p_queue, coalesce(p_tenant, ''), v_ranks[cardinality(v_ranks)])
    on conflict (queue, tenant) do nothing;
    if found then
      return v_ranks;
    end if;
    -- Another transaction added the tenant first (the insert waited for its commit): again.
  end loop;
  raise exception 'next_fair_ranks: tenant % of queue % was neither found nor added', p_tenant, p_queue;
end
$$;

-- As 0020's, through the indexes and next_fair_ranks: one rank.
create or replace function :JOBVISOR_SCHEMA.next_fair_rank(p_queue text, p_tenant text, p_weight float8)
returns float8 language plpgsql volatile as $$
declare
  v_frontier float8 := :JOBVISOR_SCHEMA.fair_waiting_rank(p_queue);
begin
  if v_frontier is null then
    select max(t.last_rank) into v_frontier from :JOBVISOR_SCHEMA.tenant_ranks t where t.queue = p_queue;
  end if;
  return (:JOBVISOR_SCHEMA.next_fair_ranks(p_queue, p_tenant, array[p_weight], coalesce(v_frontier, 0)))[1];
end
$$;
