-- jobvisor schema, version 26: an index for pruneJobs (issue 27). Each batch of a prune reads
-- the finished jobs of a state past a cutoff, a few at a time; without an index every batch,
-- and a prune that finds nothing, read the whole table. Partial, on finished states only:
-- live jobs (the rows that change most) are not in it, and a job enters it once, when it
-- finishes.
create index jobs_finished_idx on :JOBVISOR_SCHEMA.jobs (state, finished_at)
  where state in ('completed', 'skipped', 'dead', 'cancelled');
