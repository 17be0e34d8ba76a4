-- jobvisor schema, version 3: snooze, cancel across workers, progress, a deadline across all
-- attempts, trace context. Nullable columns without defaults: adding them rewrites nothing.

alter table :JOBVISOR_SCHEMA.jobs
  -- The deadline across all attempts (schedule-to-close): at it the job is dead, whatever
  -- attempts remain.
  add column expires_at timestamptz,
  -- A cancel asked for while the job ran; the renewal reports it to the worker holding the
  -- lease (a NOTIFY tells it sooner), which aborts the attempt and writes `cancelled`.
  add column cancel_requested_at timestamptz,
  -- The last progress a handler reported, throttled by its worker.
  add column progress_percent double precision,
  add column progress_message text,
  add column progress_at timestamptz,
  -- The enqueue span's context (W3C traceparent …), so that attempts join its trace.
  add column trace_context jsonb;

-- The reaper finds waiting jobs whose deadline passed. Only jobs with a deadline write to it.
create index jobs_expiry_idx on :JOBVISOR_SCHEMA.jobs (expires_at)
  where expires_at is not null and state in ('pending', 'retrying');
