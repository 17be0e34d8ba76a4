-- jobvisor schema, version 29: exact queue depths for metrics (issue 27, getQueueDepths).
-- Every live job, by queue and state, with its runAt: a scrape counts each queue's jobs per
-- state and finds its oldest due runAt in one index-only scan of this index. Partial on the
-- live states, so it holds the backlog only: millions of completed jobs are not in it. The
-- live states already change the claim's partial indexes, so a transition is never a HOT
-- update; this index adds one entry per transition between live states.
create index jobs_live_idx on :JOBVISOR_SCHEMA.jobs (queue, state, run_at)
  where state in ('pending', 'retrying', 'running', 'waiting', 'sleeping');
