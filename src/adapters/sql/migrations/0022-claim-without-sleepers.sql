-- jobvisor schema, version 22: the claim's indexes hold only jobs that can be due soon.
--
-- 0017 put sleeping jobs (a durable sleep, or a wait for a signal, up to 9999-12-31) into
-- jobs_claim_idx beside the pending ones, so the claim took a woken sleeper as it takes a
-- retrying job. Sleepers sort after every due job of their priority, so a claim that found
-- fewer due jobs than it asked for (every claim at the tail of a drain, every poll of an idle
-- queue) read past all of them: with 100,000 jobs asleep a drain beside them ran at 0.56x.
-- And each new job's entry went in before the sleepers', in the middle of the index.
--
-- Now a sleeping job is only in jobs_later_idx (0021: run_at first), and the claim takes the
-- due sleepers of a queue from there, a range read of the rows due by now
-- (queries/claim-jobs.ts, `woken`), beside the first n entries of jobs_claim_idx.
drop index :JOBVISOR_SCHEMA.jobs_claim_idx;
create index jobs_claim_idx on :JOBVISOR_SCHEMA.jobs (queue, priority desc, run_at, id)
  where state in ('pending', 'retrying');

drop index :JOBVISOR_SCHEMA.jobs_fair_claim_idx;
create index jobs_fair_claim_idx on :JOBVISOR_SCHEMA.jobs (queue, fair_rank, priority desc, run_at, id)
  where fair_rank is not null and state in ('pending', 'retrying');

-- Not breaking (schema-version.ts): a worker of the build before still claims correctly, as it
-- asks for sleeping jobs with the rest; only its claim's plan reads another index.
