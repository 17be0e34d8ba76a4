import type { EnqueueJob, EnqueueResult, FlowDependency, JobStore, OnConflict, Debounce, OnDependencyFailure, RateLimit, SqlClient } from './adapters/store.js';
import { InvalidOptionError } from './errors.js';
import type { ContinueAfter } from './machines/continue-after.js';
import { assertJobId, assertPolicy } from './flows/flow-checks.js';
import { type BackoffFn, exponentialBackoff } from './machines/backoff.js';
import { traceEnqueue } from './telemetry/tracing.js';
import type { ClaimedJob, JobErrorInfo, JobRecord, JobState, SignalResult, SignalWaitOptions } from './types.js';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_TIMER_MS,
  assertEnqueueJob,
  assertJsonPayload,
  assertKey,
  assertMaxAttempts,
  assertName,
  assertPositiveInt,
  assertTimerMs,
} from './validation.js';

/** A job a handler waits for, as its handler reads it: `job.parents()`, `job.children()`. */
export interface DependencyOutcome<R = unknown> {
  id: string;
  /** `completed`, or how it ended when the job runs anyway (`onFailure: 'run'`). */
  state: JobState;
  result: R | null;
  error: JobErrorInfo | null;
}

/** A child a handler adds with `job.continueAfter`. */
export interface ChildSpec extends Omit<EnqueueOptions, 'client' | 'uniqueKey' | 'dependsOn' | 'onParentFailure' | 'runIn' | 'expiresIn'> {
  queue: string | { name: string; handlers: HandlerMap; settings: { maxAttempts: number; maxPayloadBytes: number } };
  kind: string;
  payload?: unknown;
  /** What the waiting job does when this child ends dead, cancelled or skipped. Default `cancel`. */
  onFailure?: OnDependencyFailure;
}

/** What a handler receives for one attempt. */
export interface Job<P = unknown> {
  id: string;
  queue: string;
  kind: string;
  payload: P;
  /** This attempt's number, from 1. */
  attempt: number;
  maxAttempts: number;
  /** Aborts on deadline, expiry, cancel, shutdown after the grace period, and a lost lease. */
  signal: AbortSignal;
  /** The row as claimed. */
  record: ClaimedJob<P>;
  /** Reports progress, 0 to 100, with an optional message (cut at 1,000 characters). Stored
   *  on the row, at most once a second per job, the last report winning; the last one is
   *  written with the outcome at the latest. Throws InvalidOptionError outside 0..100. */
  progress: (percent: number, message?: string) => void;
  /** The results of the jobs this one waited for in its flow, by name (docs/workflows.md). Type
   *  them from the flow: `job.parents<ParentResults<typeof flow, 'report'>>()`. */
  parents<T extends Record<string, unknown> = Record<string, unknown>>(): Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }>;
  /** The children this job added with `continueAfter`, by key, as they stand: empty on the
   *  first run, their results in the continuation. */
  children<T extends Record<string, unknown> = Record<string, unknown>>(): Promise<{ [K in keyof T]: DependencyOutcome<T[K]> }>;
  /** Return its value to add `children` and run this job again once they have all ended. */
  continueAfter(children: Readonly<Record<string, ChildSpec>>): ContinueAfter;
  /** Runs `fn` once and stores its JSON result with the job, fenced by the lease; a later run
   *  of the job (a retry, a rescue, a wake-up) gets the stored result without calling `fn`
   *  (docs/durable-jobs.md). The nth call of one name in a run is `name#n`. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Gives back the slot and the lease and sleeps `ms` in the store (its clock); any worker
   *  runs the job again when due, and the handler replays to just after this call. */
  sleep(name: string, ms: number): Promise<void>;
  /** As `sleep`, until a time. */
  sleepUntil(name: string, until: Date): Promise<void>;
  /** Waits without a slot or lease until `sendSignal(store, job.id, name, payload)` delivers a
   *  payload (one sent earlier waits in the job's mailbox), or `timeoutMs` passes. */
  waitForSignal<T = unknown>(name: string, options?: SignalWaitOptions): Promise<SignalResult<T>>;
}

export type Handler<P = any, R = any> = (job: Job<P>) => Promise<R | ContinueAfter> | R | ContinueAfter;
export type HandlerMap = Record<string, Handler>;

export type PayloadOf<H> = H extends Handler<infer P, any> ? P : never;
export type ResultOf<H> = H extends Handler<any, infer R> ? Exclude<Awaited<R>, ContinueAfter> : never;

export interface QueueOptions<H extends HandlerMap> {
  /** Handlers by kind. `enqueue` refuses any other kind; a job of another kind that reaches
   *  the queue all the same (through the store, SQL or an older process) is skipped
   *  (`unknown_kind`). `{}`: a queue this process only enqueues to, of any kind. */
  handlers: H;
  /** Jobs of this queue running at once in one supervisor. Default 1. */
  concurrency?: number;
  /** A named gate (declared in the supervisor's `gates`) shared with other queues. */
  gate?: string;
  /** Attempts before a job is dead; a job may carry its own. Default 3. */
  maxAttempts?: number;
  /** How long a claim holds without renewal. Default 120,000 ms. */
  leaseMs?: number;
  /** Lease renewal period; must be shorter than the lease. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Per-attempt deadline, > 0; null = none. Default 900,000 ms (15 minutes). */
  deadlineMs?: number | null;
  /** Delay before the next attempt. Default exponentialBackoff() (1 s doubling, capped at 1 h, jittered). */
  backoff?: BackoffFn;
  /** Natural key of a job for dead-job alert dedupe (e.g. its place id): a string, or a number
   *  (taken as its decimal text). Default: none (queue and kind). */
  alertKey?: (job: JobRecord<PayloadOf<H[keyof H]>>) => string | number | undefined;
  /** Largest payload accepted by enqueue, in bytes of JSON. Default 1 MiB. */
  maxPayloadBytes?: number;
  /** Jobs of this queue with the same `concurrencyKey` running at once, across every worker.
   *  Default 1. */
  perKeyConcurrency?: number;
  /** At most `max` jobs of this queue start in any `intervalMs`, across every worker.
   *  Default none. */
  rateLimit?: RateLimit;
  /** Claim round-robin across the jobs' `tenant`s, so that one tenant's backlog never starves
   *  another's (docs/queues-and-handlers.md#fair-share). `{ weights }`: jobs per round for the
   *  tenants named (default 1 each). Default false. */
  fairShare?: boolean | { weights?: Readonly<Record<string, number>> };
}

export interface EnqueueOptions {
  /** Higher runs first. Default 0. */
  priority?: number;
  /** Not before this time. Default now. */
  runAt?: Date;
  /** Not before this many milliseconds from now by the store's clock (the database's for the
   *  SQL stores), whatever the caller's clock says. Not with `runAt`, nor in flows. */
  runIn?: number;
  /** Overrides the queue's maxAttempts for this job. */
  maxAttempts?: number;
  /** While a job with this key is pending, retrying, running or sleeping in this queue,
   *  return it instead (or replace it: `onConflict`). */
  uniqueKey?: string;
  /** With `uniqueKey`, what a live holder of the key gets: `return` (default) it is returned
   *  as it is; `replace` a pending or retrying one takes this job's kind, payload, times and
   *  options in place (a running or sleeping one is returned); `replaceRunning` as `replace`,
   *  and a running or sleeping one is cancelled (its result never lands) and this job queued. */
  onConflict?: OnConflict;
  /** One job per burst of enqueues with `key`: it runs `delayMs` after the last one, or
   *  `maxWaitMs` after the first, with the last one's payload (docs/enqueueing.md). Not with
   *  `uniqueKey`, `runAt`, `runIn`, nor in flows. */
  debounce?: Debounce;
  /** On a queue defined with `fairShare`: whose job this is (e.g. a customer id). Claims go
   *  round-robin across tenants; a job without one is the default tenant's. Refused on
   *  another queue. */
  tenant?: string;
  /** Jobs of this queue sharing this key run at most `perKeyConcurrency` at once, across
   *  every worker (e.g. a customer id). */
  concurrencyKey?: string;
  /** The deadline across all attempts (schedule-to-close): at it the job is dead, whatever
   *  attempts remain; a running attempt is aborted. After the job's runAt, checked by the
   *  store with its clock. Default none. */
  expiresAt?: Date;
  /** `expiresAt` this many milliseconds from now by the store's clock. Not with `expiresAt`,
   *  nor in flows. */
  expiresIn?: number;
  /** The caller's SQL client inside an open transaction: the job exists only if it commits. */
  client?: SqlClient;
  /** Ids of stored jobs to wait for: the job is `waiting` until the last of them ends, then
   *  due (docs/workflows.md). Not with `uniqueKey`, nor in `enqueueMany`. Default none. */
  dependsOn?: readonly string[];
  /** With `dependsOn`: what the job does when one of them ends dead, cancelled or skipped.
   *  Default `cancel`. */
  onParentFailure?: OnDependencyFailure;
}

/** A queue's settings with every default filled in. */
export interface ResolvedQueueSettings {
  concurrency: number;
  gate: string | undefined;
  maxAttempts: number;
  leaseMs: number;
  heartbeatMs: number;
  /** null = no deadline. */
  deadlineMs: number | null;
  backoff: BackoffFn;
  /** No `backoff` was given: `backoff` is exponentialBackoff(), whose randomness a
   *  supervisor's `random` option replaces. */
  defaultBackoff: boolean;
  maxPayloadBytes: number;
  perKeyConcurrency: number;
  rateLimit: RateLimit | undefined;
  /** null: not a fair queue; else each tenant's weight (1 if not named). */
  fairShare: { weights: ReadonlyMap<string, number> } | null;
}

export interface Queue<H extends HandlerMap = HandlerMap> {
  readonly name: string;
  readonly handlers: H;
  readonly settings: ResolvedQueueSettings;
  /** What the queue's alertKey returns for the job (the alerter checks it). */
  alertKey(job: JobRecord): string | number | undefined;
  /** Adds one job; with a unique key that is live, returns that job (`created: false`). */
  enqueue<K extends keyof H & string>(
    store: JobStore,
    kind: K,
    payload: PayloadOf<H[K]>,
    options?: EnqueueOptions,
  ): Promise<EnqueueResult>;
  /** Adds many jobs in one store call. */
  enqueueMany<K extends keyof H & string>(
    store: JobStore,
    jobs: ReadonlyArray<{ kind: K; payload: PayloadOf<H[K]> } & Omit<EnqueueOptions, 'client'>>,
    options?: { client?: SqlClient },
  ): Promise<EnqueueResult[]>;
}

/** Every option's name: another (a typo, a supervisor's option) is refused, not ignored. */
const QUEUE_OPTION_NAMES: ReadonlySet<string> = new Set<keyof QueueOptions<HandlerMap>>([
  'handlers', 'concurrency', 'gate', 'maxAttempts', 'leaseMs', 'heartbeatMs', 'deadlineMs', 'backoff', 'alertKey', 'maxPayloadBytes',
  'perKeyConcurrency', 'rateLimit', 'fairShare',
]);

export function defineQueue<H extends HandlerMap>(name: string, options: QueueOptions<H>): Queue<H> {
  assertName('queue name', name);
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError(`queue "${name}" options`, 'must be an object with handlers');
  for (const key of Object.keys(options)) {
    if (!QUEUE_OPTION_NAMES.has(key)) {
      throw new InvalidOptionError(`queue "${name}" ${key}`, `is not a queue option (they are ${[...QUEUE_OPTION_NAMES].join(', ')})`);
    }
  }
  if (typeof options.handlers !== 'object' || options.handlers === null || Array.isArray(options.handlers)) {
    throw new InvalidOptionError(`queue "${name}" handlers`, 'must be an object of kind → handler function ({} for a queue this process only enqueues to)');
  }
  if (options.alertKey !== undefined && typeof options.alertKey !== 'function') {
    throw new InvalidOptionError(`queue "${name}" alertKey`, `must be a function (job) => string | number | undefined, got ${typeof options.alertKey}`);
  }
  const settings = resolveQueueSettings(name, options);
  for (const kind of Object.keys(options.handlers)) {
    assertName(`queue "${name}" handler kind`, kind);
    if (typeof options.handlers[kind] !== 'function') {
      throw new InvalidOptionError(`queue "${name}" handler "${kind}"`, 'must be a function');
    }
  }
  const toJob = (kind: string, payload: unknown, opts: Omit<EnqueueOptions, 'client'>): EnqueueJob => {
    assertHandledKind(name, options.handlers, kind);
    return buildEnqueueJob(name, kind, payload, opts, settings);
  };
  return {
    name,
    handlers: options.handlers,
    settings,
    alertKey: (job) => options.alertKey?.(job as JobRecord<any>),
    async enqueue(store, kind, payload, opts = {}) {
      const { client, dependsOn, onParentFailure, ...rest } = opts;
      if (dependsOn !== undefined) {
        const job = toJob(kind, payload, rest);
        const parents = toParents(job, dependsOn, onParentFailure);
        const [stored] = await traceEnqueue(name, [job], async ([traced]) => {
          const flow = await store.enqueueFlow({ name: kind, jobs: [{ ...traced!, node: kind, dependsOn: parents }], ...(client ? { client } : {}) });
          return flow.jobs.map((row) => ({ job: row, created: true }));
        });
        return stored!;
      }
      if (onParentFailure !== undefined) throw new InvalidOptionError('onParentFailure', 'applies only with dependsOn');
      const [result] = await traceEnqueue(name, [toJob(kind, payload, rest)], (traced) =>
        store.enqueueJobs({ jobs: traced, ...(client ? { client } : {}) }),
      );
      if (!result) throw new Error('store answered no result for an enqueue');
      return result;
    },
    async enqueueMany(store, jobs, opts = {}) {
      const rows = jobs.map(({ kind, payload, ...rest }) => {
        if ('dependsOn' in rest || 'onParentFailure' in rest) {
          throw new InvalidOptionError('dependsOn', 'enqueueMany takes no dependencies: enqueue them one by one, or as a flow (enqueueFlow)');
        }
        return toJob(kind, payload, rest);
      });
      if (rows.length === 0) return [];
      return traceEnqueue(name, rows, (traced) => store.enqueueJobs({ jobs: traced, ...(opts.client ? { client: opts.client } : {}) }));
    },
  };
}

/** A plain enqueue's `dependsOn`, checked: job ids, each once, and no unique key (a waiting
 *  job does not hold one). */
function toParents(job: EnqueueJob, dependsOn: readonly string[], onParentFailure: OnDependencyFailure = 'cancel'): FlowDependency[] {
  if (!Array.isArray(dependsOn) || dependsOn.length === 0) {
    throw new InvalidOptionError('dependsOn', 'must be a non-empty array of job ids');
  }
  if (job.uniqueKey !== null) throw new InvalidOptionError('uniqueKey', 'cannot be given with dependsOn: a waiting job holds no unique key');
  assertPolicy('onParentFailure', onParentFailure);
  for (const id of dependsOn) assertJobId('dependsOn', id);
  if (new Set(dependsOn).size < dependsOn.length) throw new InvalidOptionError('dependsOn', 'names a job twice');
  return dependsOn.map((jobId) => ({ jobId, name: jobId, onFailure: onParentFailure }));
}

/** A kind the queue has a handler for; any kind when it has none (a queue only enqueued to).
 *  A job of another kind would only be skipped (`unknown_kind`) once claimed. */
export function assertHandledKind(queue: string, handlers: HandlerMap, kind: string): void {
  const kinds = Object.keys(handlers);
  if (kinds.length === 0 || Object.hasOwn(handlers, kind)) return;
  assertName('kind', kind);
  throw new InvalidOptionError('kind', `queue "${queue}" has no handler for kind "${kind}" (it has ${kinds.join(', ')})`);
}

/** Validates one job for enqueue and fills in its defaults; throws before anything is written. */
export function buildEnqueueJob(
  queue: string,
  kind: string,
  payload: unknown,
  options: Omit<EnqueueOptions, 'client'>,
  settings: Pick<ResolvedQueueSettings, 'maxAttempts' | 'maxPayloadBytes'> & Partial<Pick<ResolvedQueueSettings, 'fairShare'>> = {
    maxAttempts: DEFAULTS.maxAttempts,
    maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  },
): EnqueueJob {
  assertJsonPayload(payload, settings.maxPayloadBytes);
  const job: EnqueueJob = {
    queue,
    kind,
    // No payload is `{}`, as in the SQL function and the CLI; JSON null stays null.
    payload: payload === undefined ? {} : payload,
    priority: options.priority === undefined ? 0 : options.priority,
    ...(options.runAt !== undefined ? { runAt: options.runAt } : {}),
    ...(options.runIn !== undefined ? { runIn: options.runIn } : {}),
    maxAttempts: options.maxAttempts === undefined ? settings.maxAttempts : options.maxAttempts,
    uniqueKey: options.uniqueKey === undefined ? null : options.uniqueKey,
    concurrencyKey: options.concurrencyKey === undefined ? null : options.concurrencyKey,
    ...(options.expiresAt !== undefined ? { expiresAt: options.expiresAt } : {}),
    ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}),
    ...(options.onConflict !== undefined ? { onConflict: options.onConflict } : {}),
    ...(options.debounce !== undefined ? { debounce: options.debounce } : {}),
    ...fairShareOf(queue, options.tenant, settings.fairShare ?? null),
  };
  assertEnqueueJob(job);
  return job;
}

/** A job's place on a fair queue: its tenant and that tenant's weight. */
function fairShareOf(queue: string, tenant: string | undefined, fairShare: ResolvedQueueSettings['fairShare']): Pick<EnqueueJob, 'fairShare'> {
  if (fairShare === null) {
    if (tenant !== undefined) throw new InvalidOptionError('tenant', `queue "${queue}" is not defined with fairShare: a tenant would change nothing`);
    return {};
  }
  return { fairShare: { tenant: tenant ?? null, weight: (tenant === undefined ? undefined : fairShare.weights.get(tenant)) ?? 1 } };
}

export const DEFAULTS = {
  concurrency: 1,
  maxAttempts: 3,
  leaseMs: 120_000,
  deadlineMs: 900_000,
} as const;

function resolveQueueSettings(
  name: string,
  options: Omit<QueueOptions<HandlerMap>, 'handlers' | 'alertKey'>,
): ResolvedQueueSettings {
  const at = (option: string) => `queue "${name}" ${option}`;
  const concurrency = options.concurrency ?? DEFAULTS.concurrency;
  assertPositiveInt(at('concurrency'), concurrency);
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  assertMaxAttempts(at('maxAttempts'), maxAttempts);
  const leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
  assertPositiveInt(at('leaseMs'), leaseMs);
  const heartbeatMs = options.heartbeatMs ?? Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(leaseMs / 3)));
  assertTimerMs(at('heartbeatMs'), heartbeatMs);
  if (heartbeatMs >= leaseMs) {
    throw new InvalidOptionError(at('heartbeatMs'), `must be shorter than leaseMs (${leaseMs}), got ${heartbeatMs}`);
  }
  const deadlineMs = options.deadlineMs === undefined ? DEFAULTS.deadlineMs : options.deadlineMs;
  if (deadlineMs !== null) assertTimerMs(at('deadlineMs'), deadlineMs);
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  assertPositiveInt(at('maxPayloadBytes'), maxPayloadBytes);
  if (options.gate !== undefined) assertName(at('gate'), options.gate);
  const perKeyConcurrency = options.perKeyConcurrency ?? 1;
  assertInt32(at('perKeyConcurrency'), perKeyConcurrency);
  if (options.rateLimit !== undefined) {
    if (typeof options.rateLimit !== 'object' || options.rateLimit === null) {
      throw new InvalidOptionError(at('rateLimit'), `must be { max, intervalMs }, got ${String(options.rateLimit)}`);
    }
    assertInt32(at('rateLimit.max'), options.rateLimit.max);
    assertPositiveInt(at('rateLimit.intervalMs'), options.rateLimit.intervalMs);
  }
  const fairShare = resolveFairShare(at('fairShare'), options.fairShare);
  if (options.backoff !== undefined && typeof options.backoff !== 'function') {
    throw new InvalidOptionError(at('backoff'), 'must be a function (attempt) => milliseconds');
  }
  return {
    concurrency,
    gate: options.gate,
    maxAttempts,
    leaseMs,
    heartbeatMs,
    deadlineMs,
    backoff: checkedBackoff(at('backoff'), options.backoff ?? exponentialBackoff()),
    defaultBackoff: options.backoff === undefined,
    maxPayloadBytes,
    perKeyConcurrency,
    rateLimit: options.rateLimit && { max: options.rateLimit.max, intervalMs: options.rateLimit.intervalMs },
    fairShare,
  };
}

/** Most jobs per round a tenant's weight may give. */
const MAX_TENANT_WEIGHT = 1_000;

function resolveFairShare(what: string, option: QueueOptions<HandlerMap>['fairShare']): ResolvedQueueSettings['fairShare'] {
  if (option === undefined || option === false) return null;
  if (option === true) return { weights: new Map() };
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new InvalidOptionError(what, `must be true, false or { weights }, got ${String(option)}`);
  }
  for (const key of Object.keys(option)) {
    if (key !== 'weights') throw new InvalidOptionError(`${what}.${key}`, 'is not a fairShare option (it has weights)');
  }
  const weights = new Map<string, number>();
  for (const [tenant, weight] of Object.entries(option.weights ?? {})) {
    assertKey(`${what}.weights key`, tenant);
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0 || weight > MAX_TENANT_WEIGHT) {
      throw new InvalidOptionError(`${what}.weights["${tenant}"]`, `must be a number above 0 and at most ${MAX_TENANT_WEIGHT} (jobs per round), got ${String(weight)}`);
    }
    weights.set(tenant, weight);
  }
  return { weights };
}

/** A count the store keeps in an `integer` column: 1 to 2^31 - 1. */
function assertInt32(what: string, value: unknown): asserts value is number {
  assertPositiveInt(what, value);
  if (value > 2_147_483_647) throw new InvalidOptionError(what, `must be at most 2147483647, got ${value}`);
}

/** Longest wait before a retry: a hundred years. Past about 285,000 years `runAt` would not
 *  be a valid Date, and a retry write without one fails for every job batched with it. */
const MAX_BACKOFF_MS = 100 * 365.25 * 86_400_000;

/** A backoff that returns no usable delay throws, naming the queue, instead of handing the
 *  store a retry it cannot write: the attempt's actor fails, and its job is rescued. */
function checkedBackoff(what: string, backoff: BackoffFn): BackoffFn {
  return (attempt) => {
    const ms = backoff(attempt);
    if (typeof ms !== 'number' || !(ms >= 0 && ms <= MAX_BACKOFF_MS)) {
      throw new InvalidOptionError(what, `returned ${String(ms)} for attempt ${attempt}; must return milliseconds from 0 to ${MAX_BACKOFF_MS}`);
    }
    return ms;
  };
}
