-- jobvisor schema, version 1. `:JOBVISOR_SCHEMA` is replaced by the quoted schema name
-- (with psql: `psql -v JOBVISOR_SCHEMA=jobvisor -f 0001-jobs.sql`).

create table :JOBVISOR_SCHEMA.jobs (
  id bigint generated always as identity primary key,
  queue text not null,
  kind text not null,
  payload jsonb not null,
  state text not null default 'pending'
    check (state in ('pending', 'running', 'retrying', 'completed', 'dead', 'skipped', 'cancelled')),
  priority integer not null default 0,
  run_at timestamptz not null,
  attempt integer not null default 0 check (attempt >= 0),
  max_attempts integer not null check (max_attempts >= 1),
  unique_key text,
  worker_id text,
  lease_token uuid,
  lease_expires_at timestamptz,
  result jsonb,
  error jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz
);

-- The claim's index: its columns are exactly the claim's WHERE queue = … and ORDER BY, and
-- it holds only claimable rows, so a claim reads the first `limit` entries of one queue
-- whatever the size of the backlog or of the finished history.
create index jobs_claim_idx on :JOBVISOR_SCHEMA.jobs (queue, priority desc, run_at, id)
  where state in ('pending', 'retrying');

-- One live job per (queue, unique_key); enqueue's ON CONFLICT names this predicate.
create unique index jobs_unique_key_idx on :JOBVISOR_SCHEMA.jobs (queue, unique_key)
  where unique_key is not null and state in ('pending', 'retrying', 'running');

-- The reaper looks only at running rows, ordered by expiry.
create index jobs_lease_expiry_idx on :JOBVISOR_SCHEMA.jobs (lease_expires_at)
  where state = 'running';

-- Append-only transition history, written in the same statement as the state change.
-- No foreign key: a key check per appended row would tax every hot-path write, the store
-- is the only writer, and pruneJobs deletes a job's history with the job.
create table :JOBVISOR_SCHEMA.job_events (
  id bigint generated always as identity primary key,
  job_id bigint not null,
  from_state text,
  to_state text not null,
  attempt integer not null,
  worker_id text,
  at timestamptz not null,
  error jsonb
);

create index job_events_job_idx on :JOBVISOR_SCHEMA.job_events (job_id, id);
