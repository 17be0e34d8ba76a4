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
-- filled again), not the table. Small ranges (32 pages) keep that read short.
--
-- A read takes every range not yet summarised whole. autosummarize leaves that to
-- autovacuum (about once a minute; PGlite runs none), so the feed summarises the new ranges
-- itself before it reads (summarize_job_events, below): what it reads is then what was
-- written since its last poll. The id column and its identity stay: they order the history
-- and are the feed's cursor.
--
-- Not breaking: a build before this one writes the same rows, and reads the feed by a scan
-- of the history (slower on a large history, still right).
alter table :JOBVISOR_SCHEMA.job_events drop constraint job_events_pkey;

create index job_events_id_brin on :JOBVISOR_SCHEMA.job_events using brin (id)
  with (pages_per_range = 32, autosummarize = on);

-- Summarises job_events_id_brin's full ranges not summarised yet; the number summarised, or
-- -1 when it cannot now. It takes the table's SHARE UPDATE EXCLUSIVE lock, as VACUUM does: a
-- vacuum or another summary under way makes it give up at once (lock_timeout) rather than
-- wait, and a role that does not own the table (a read-only inspector) is not allowed to: the
-- read goes on without it.
create function :JOBVISOR_SCHEMA.summarize_job_events() returns integer
language plpgsql volatile set lock_timeout = '20ms' as $$
begin
  return brin_summarize_new_values(':JOBVISOR_SCHEMA.job_events_id_brin'::regclass);
exception when lock_not_available or insufficient_privilege then
  return -1;
end
$$;
