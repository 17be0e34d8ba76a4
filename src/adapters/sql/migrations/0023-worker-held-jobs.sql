-- jobvisor schema, version 23: held versus running (issue 25). A worker's heartbeat lists the
-- jobs it holds claimed ahead of a free slot, [{"id": "…", "queue": "…"}]: in the store they are
-- `running` as those whose handler runs. One write per heartbeat, none per job; without
-- prefetch the list is empty. Null: a row written by an older version, which does not say.
alter table :JOBVISOR_SCHEMA.workers add column held jsonb;
