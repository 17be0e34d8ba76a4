-- jobvisor schema, version 5: dead-job alert dedupe shared by every worker on the store
-- (queries/claim-alert.ts), and length limits on what the store indexes.

-- Per dedupe key, when its last alert went out, how many were held back since, and how many
-- that last alert reported held back before it. Workers take the right to send by
-- compare-and-set on this row, so one key alerts at most once per window across the whole
-- fleet, and a held-back count is kept until that key alerts again.
create table :JOBVISOR_SCHEMA.alerts (
  dedupe_key text primary key,
  sent_at timestamptz not null,
  suppressed integer not null default 0,
  reported integer not null default 0
);

-- An index row holds at most about 2,700 bytes: a longer key would pass the insert's unique
-- index (unique_key) or none at all (concurrency_key), then fail every claim that tries to
-- index it as running, stopping the whole worker. The library and the SQL enqueue refuse
-- longer keys with a clear error; these keep any other writer from storing one. NOT VALID:
-- rows already stored are not checked, so the migration never fails on old data.
alter table :JOBVISOR_SCHEMA.jobs
  add constraint jobs_unique_key_length check (octet_length(unique_key) <= 1000) not valid,
  add constraint jobs_concurrency_key_length check (octet_length(concurrency_key) <= 1000) not valid,
  add constraint jobs_queue_length check (octet_length(queue) <= 128) not valid,
  add constraint jobs_kind_length check (octet_length(kind) <= 128) not valid;
