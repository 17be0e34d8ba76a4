-- jobvisor schema, version 24: a schedule can be paused (issue 25, the inspector's schedules
-- page). A paused schedule still advances tick by tick, by the same compare-and-set, but its
-- ticks enqueue no job (enqueue-scheduled-jobs.ts): resumed, it goes on from the next tick,
-- with no burst of the ticks it passed over. Null: not paused.
alter table :JOBVISOR_SCHEMA.schedules add column paused_at timestamptz;
