-- jobvisor schema, version 4: recurring schedules, per-key concurrency and queue rate limits
-- (queries/claim-jobs.ts, enqueue-scheduled-jobs.ts, get-schedules.ts).

-- A job with a concurrency key runs at most a queue's per-key limit at once, across workers.
alter table :JOBVISOR_SCHEMA.jobs add column concurrency_key text;

-- Running jobs per (queue, key): what the claim counts. Only keyed rows write to it.
create index jobs_running_key_idx on :JOBVISOR_SCHEMA.jobs (queue, concurrency_key)
  where state = 'running' and concurrency_key is not null;

-- Per schedule, the time through which its ticks are enqueued (or were before it existed).
-- Supervisors advance it by compare-and-set in the statement that enqueues the tick's job, so
-- a tick is enqueued once however many supervisors run, and never again once that job is done.
create table :JOBVISOR_SCHEMA.schedules (
  name text primary key,
  last_tick_at timestamptz not null,
  updated_at timestamptz not null
);

-- Claims of rate-limited queues within their window (a sliding log, pruned as it is read).
create table :JOBVISOR_SCHEMA.queue_starts (
  queue text not null,
  at timestamptz not null
);
create index queue_starts_queue_at_idx on :JOBVISOR_SCHEMA.queue_starts (queue, at);

-- Why functions: a claim reads "what is running" from the snapshot its statement started
-- with, which misses claims that committed since. Each of these takes a transaction-level
-- advisory lock (a try: a claimer never waits, it skips the key or queue this round), then
-- counts in a fresh snapshot (a volatile function takes one per query). Every claim of a key
-- or of a rate-limited queue holds its lock until it commits, so the count sees every
-- earlier claim and none can run beside it: the limit holds with any number of claimers.

-- Free running slots of one key: its limit less its running jobs; 0 while another claim
-- holds the key.
create function :JOBVISOR_SCHEMA.claim_key_slots(p_queue text, p_key text, p_limit integer)
returns integer language plpgsql volatile as $$
begin
  -- Queue names hold no space, so ' ' keeps (queue, key) pairs apart.
  if not pg_try_advisory_xact_lock(hashtextextended(':JOBVISOR_SCHEMA key ' || p_queue || ' ' || p_key, 0)) then
    return 0;
  end if;
  return greatest(0, p_limit - (
    select count(*) from :JOBVISOR_SCHEMA.jobs
    where queue = p_queue and concurrency_key = p_key and state = 'running'));
end
$$;

-- Starts a rate-limited queue may still make now: max less its claims in the last
-- interval; 0 while another claim holds the queue.
create function :JOBVISOR_SCHEMA.claim_rate_allowance(
  p_queue text, p_max integer, p_interval_ms double precision, p_now timestamptz)
returns integer language plpgsql volatile as $$
begin
  if not pg_try_advisory_xact_lock(hashtextextended(':JOBVISOR_SCHEMA rate ' || p_queue, 0)) then
    return 0;
  end if;
  -- Pruned only once two intervals old: a claim whose transaction started a little before
  -- the one that pruned, but took the lock after it, still finds every row of its window.
  delete from :JOBVISOR_SCHEMA.queue_starts
  where queue = p_queue and at <= p_now - 2 * p_interval_ms * interval '1 millisecond';
  return greatest(0, p_max - (
    select count(*) from :JOBVISOR_SCHEMA.queue_starts
    where queue = p_queue and at > p_now - p_interval_ms * interval '1 millisecond'));
end
$$;
