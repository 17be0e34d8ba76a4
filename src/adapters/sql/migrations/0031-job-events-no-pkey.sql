-- jobvisor schema, version 31: the history without its primary-key index (issue 26).
--
-- Nothing looks a history row up by its id alone: a job's story walks job_events_job_idx
-- (job_id, id), throughput and pruning read by time and by job. Only the inspector's live
-- feed reads by id, the tail of the table (the ids after its cursor, and the newest few).
-- The primary key's btree cost every transition an index entry: about 133 bytes of WAL a
-- job in a drain (bench/optimisations.md, "History layouts measured", layout B).
--
-- A BRIN index on id serves the feed instead. The table is append-only, so ids follow the
-- pages they are written to, and a range's summary only ever grows: `id > cursor` reads the
-- ranges written to since the cursor (new pages at the end, or pages freed by pruning and
-- filled again), not the table. Small ranges (32 pages) keep that read short; autosummarize
-- summarises each range as soon as it is full, so the newest unsummarised pages stay few.
-- The id column and its identity stay: they order the history and are the feed's cursor.
--
-- Not breaking: a build before this one reads the feed by a scan of the history (slower
-- on a big table, still right) and writes the same rows.
alter table :JOBVISOR_SCHEMA.job_events drop constraint job_events_pkey;

create index job_events_id_brin on :JOBVISOR_SCHEMA.job_events using brin (id)
  with (pages_per_range = 32, autosummarize = on);
