-- jobvisor schema, version 8: queues that can be paused, and the workers on the store.

-- One row per queue, written the first time a job of it is enqueued and never by prune, so a
-- queue stays known after its jobs are gone. paused_at: while set, no claim takes its jobs.
create table :JOBVISOR_SCHEMA.queues (
  name text primary key check (octet_length(name) <= 128),
  created_at timestamptz not null default now(),
  paused_at timestamptz
);

insert into :JOBVISOR_SCHEMA.queues (name, created_at)
select queue, min(created_at) from :JOBVISOR_SCHEMA.jobs group by queue
on conflict do nothing;

-- Every way in (the library's enqueue, the SQL enqueue of 0007, a schedule's tick, a plain
-- INSERT) records its queue: once per statement, over the distinct queues it inserted. A
-- queue already known costs an index probe and writes nothing. (Sorted: two enqueues of the
-- same new queues take their row locks in one order.)
create function :JOBVISOR_SCHEMA.record_queues() returns trigger
language plpgsql as $$
begin
  insert into :JOBVISOR_SCHEMA.queues (name, created_at)
  select queue, min(created_at) from new_jobs group by queue order by queue
  on conflict do nothing;
  return null;
end;
$$;

create trigger jobs_record_queues after insert on :JOBVISOR_SCHEMA.jobs
  referencing new table as new_jobs
  for each statement execute function :JOBVISOR_SCHEMA.record_queues();

-- One row per supervisor, written at its start and at each heartbeat, removed at its stop;
-- a row whose last_seen_at is old is a worker that died without stopping.
create table :JOBVISOR_SCHEMA.workers (
  worker_id text primary key,
  host text not null,
  pid integer not null,
  queues text[] not null,
  running integer not null,
  started_at timestamptz not null,
  last_seen_at timestamptz not null
);
