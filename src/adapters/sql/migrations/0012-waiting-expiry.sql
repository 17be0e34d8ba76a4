-- jobvisor schema, version 12: the reaper ends a job that waits (flows, migration 0009) once
-- its deadline across all attempts (`expires_at`) has passed, as it ends a pending one.
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
