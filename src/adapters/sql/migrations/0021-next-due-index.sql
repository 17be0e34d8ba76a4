-- jobvisor schema, version 21: the rows a supervisor's wake-up timer looks for
-- (docs/durable-jobs.md, "When a waiting job wakes").
--
-- A supervisor asks, about once per poll interval, when the first job of its queues that is
-- claimable but not yet due will be due (a sleep's or a signal wait's end, a retry's backoff,
-- a later runAt), and sets one timer for it. jobs_claim_idx cannot answer that cheaply: it is
-- ordered by priority before run_at, so the question would read every not-yet-due row of a
-- queue, 100,000 sleeping jobs included. This index holds only such rows: sleeping and
-- retrying ones, and pending ones enqueued for later (run_at after created_at; a job due at
-- once has run_at = created_at). A plain job never enters it, so it costs a plain job
-- nothing; the question is a range read of the next poll interval's rows.
create index jobs_later_idx on :JOBVISOR_SCHEMA.jobs (run_at, queue)
  where state in ('retrying', 'sleeping') or (state = 'pending' and run_at > created_at);
