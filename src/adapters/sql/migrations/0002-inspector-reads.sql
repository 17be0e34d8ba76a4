-- jobvisor schema, version 2: indexes for the inspector's reads (queries/scan-jobs.ts,
-- get-queue-backlogs.ts, count-job-transitions.ts), chosen to cost the hot path nothing or
-- almost nothing.

-- Dead, skipped and cancelled jobs by queue, newest first: listing and counting them never
-- walks the finished history. Only the rare transitions into these states write to it.
create index jobs_unhappy_idx on :JOBVISOR_SCHEMA.jobs (state, queue, id)
  where state in ('dead', 'skipped', 'cancelled');

-- Search by unique key, live or finished. Only jobs that have a key write to it.
create index jobs_unique_key_search_idx on :JOBVISOR_SCHEMA.jobs (unique_key, id)
  where unique_key is not null;

-- Throughput reads the last minutes of history. The table is append-only, so `at` follows
-- the physical order, and a BRIN index (one min/max summary per 128 pages; an insert into
-- the newest, not yet summarised pages writes nothing to it) lets that read touch only the
-- newest pages.
create index job_events_at_brin on :JOBVISOR_SCHEMA.job_events using brin (at);
