-- jobvisor schema, version 25: the throughput summary. The inspector's throughput (per queue
-- and bucket: jobs completed, attempts retried and dead, run time percentiles) comes from the
-- history; a bucket once closed does not change, so the inspector that first reads one from
-- the history saves it here, and a fresh inspector reads these rows instead of walking the
-- window of history again (src/inspector/throughput.ts). One row per bucket width (a minute,
-- an hour) and start, every queue's numbers in `queues` (an idle bucket: an empty array, still
-- a row, so a reader knows it was read). Written only by inspectors, never by a job's
-- statement; pruned by the same statement that saves (a bounded batch of rows older than a
-- day and a bit); pruneJobs leaves it, so the throughput of pruned jobs stays.
create table :JOBVISOR_SCHEMA.throughput_buckets (
  bucket_ms integer not null,
  bucket_start timestamptz not null,
  queues jsonb not null,
  primary key (bucket_ms, bucket_start)
);
