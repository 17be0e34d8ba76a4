-- jobvisor schema, version 11: the claim's "is this queue paused?" test reads an index.
--
-- Every claim asks, per queue, whether a paused row exists for it (migration 0008). Without
-- an index on the paused queues that is a scan of the queue table: small, but the claim's
-- plan is made never to scan, and a fleet with thousands of queues would pay it per claim.
-- Only paused queues are in this index, so it stays as small as the set of paused queues.
create index queues_paused_idx on :JOBVISOR_SCHEMA.queues (name) where paused_at is not null;
