export { createSupervisor } from './supervisor/supervisor.js';
export type { Supervisor, SupervisorOptions, SupervisorClock, StopOptions } from './supervisor/supervisor.js';
export type { DeadJobAlert, DeadJobSink } from './supervisor/alerts.js';
export type { CountersStore, QueueCounters, SupervisorCounters } from './supervisor/counters.js';
export { supervisorMachine } from './supervisor/supervisor-machine.js';
export { defineQueue, buildEnqueueJob } from './queue.js';
export { defineSchedule } from './schedule.js';
export type { Schedule, ScheduleOptions } from './schedule.js';
export type {
  ChildSpec,
  DependencyOutcome,
  EnqueueOptions,
  Handler,
  HandlerMap,
  Job,
  PayloadOf,
  Queue,
  QueueOptions,
  ResolvedQueueSettings,
  ResultOf,
} from './queue.js';
export { defineFlow, flowJob, MAX_FLOW_JOBS } from './flows/define-flow.js';
export { enqueueFlow } from './flows/enqueue-flow.js';
export { retryFlow } from './flows/retry-flow.js';
export type { EnqueuedFlow } from './flows/enqueue-flow.js';
export { continueAfter } from './flows/continue-after.js';
export { ContinueAfter } from './machines/continue-after.js';
export type {
  FlowDefinition,
  FlowJobOptions,
  FlowJobs,
  FlowJobSpec,
  FlowParent,
  ParentResults,
} from './flows/flow-types.js';
export { jobMachine } from './machines/job-machine.js';
export type { JobActorFinalState, JobMachineInput, JobPorts } from './machines/job-machine.js';
export { exponentialBackoff } from './machines/backoff.js';
export type { BackoffFn, ExponentialBackoffOptions } from './machines/backoff.js';
export {
  DataDirLockedError,
  DataDirUnusableError,
  DatabaseUnavailableError,
  FlowNotFoundError,
  InvalidFlowError,
  InvalidOptionError,
  InvalidPayloadError,
  InvalidResultError,
  JobAbortedError,
  JobDeadlineExceeded,
  JobEndedError,
  JobExpired,
  JobNotFoundError,
  JobvisorError,
  MigrationLockError,
  PeerDependencyMissingError,
  PermanentJobError,
  SchemaVersionError,
  SkipJobError,
  SnoozeJobError,
  TransactionPoolerError,
  UnknownQueueError,
} from './errors.js';
export { sendSignal } from './signals.js';
export type { SendSignalOptions } from './signals.js';
export type { Histogram, HistogramSnapshot, QueueMetrics, SupervisorMetrics } from './telemetry/metrics.js';
export { FINAL_JOB_STATES, JOB_STATES, systemClock } from './types.js';
export type {
  ClaimedJob,
  Clock,
  JobErrorInfo,
  JobEvent,
  JobProgress,
  JobRecord,
  JobState,
  JobStep,
  Logger,
  SignalResult,
  SignalWaitOptions,
} from './types.js';
export type * from './adapters/store.js';
