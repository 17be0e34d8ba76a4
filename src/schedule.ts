import { type CronExpression, CronExpressionParser } from 'cron-parser';
import type { EnqueueJob } from './adapters/store.js';
import { InvalidOptionError } from './errors.js';
import { assertHandledKind, buildEnqueueJob, type EnqueueOptions, type HandlerMap, type PayloadOf, type Queue } from './queue.js';
import { assertName } from './validation.js';

export interface ScheduleOptions<H extends HandlerMap, K extends keyof H & string> {
  /** Names the schedule in the store: every supervisor that runs it shares its ticks, so give
   *  every process the same definition under one name. */
  name: string;
  /** A cron expression: five fields (minute to weekday), or six with seconds first. */
  cron: string;
  queue: Queue<H>;
  kind: K;
  payload: PayloadOf<H[K]>;
  /** The IANA time zone the expression is read in, e.g. `Europe/Paris`. Default `UTC`. */
  timezone?: string;
  /** After a time when no supervisor ran: true enqueues every missed tick (oldest first, up
   *  to 100 per check), false only the latest. Default false. */
  catchUp?: boolean;
  /** As for enqueue. `uniqueKey` defaults to `<name>@<tick as ISO 8601>`; a fixed key makes
   *  a tick whose predecessor is still live count as done without a job of its own. */
  options?: Pick<EnqueueOptions, 'priority' | 'maxAttempts' | 'uniqueKey' | 'concurrencyKey'>;
}

/** Ticks of one repeated hour that next() passes over, at most (a seconds field: 60 × 60). */
const MAX_REPEATED_TICKS = 3_600;

/** A recurring job: a cron expression, and the job each of its ticks enqueues. */
export interface Schedule {
  readonly name: string;
  readonly catchUp: boolean;
  /** The expression and its time zone: schedules with the same timetable tick together. */
  readonly timetable: string;
  /** The latest tick at or before `until`, if it is after `after`. */
  latestTick(after: Date, until: Date): Date | undefined;
  /** The first tick after `after`. */
  nextTick(after: Date): Date;
  /** The job of one tick: due at the tick. */
  jobFor(tick: Date): EnqueueJob;
}

/** Defines a recurring job; give it to `createSupervisor({ schedules })`. Checked at once. */
export function defineSchedule<H extends HandlerMap, K extends keyof H & string>(
  options: ScheduleOptions<H, K>,
): Schedule {
  const { name, cron, queue, kind, payload, timezone = 'UTC', catchUp = false } = options;
  assertName('schedule name', name);
  const at = (option: string) => `schedule "${name}" ${option}`;
  if (typeof catchUp !== 'boolean') throw new InvalidOptionError(at('catchUp'), 'must be a boolean');
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new InvalidOptionError(at('timezone'), `must be an IANA time zone such as "Europe/Paris", got ${JSON.stringify(timezone)}`);
  }
  // Parsed once (a parse costs about five times a step): each question resets it to its start.
  let expression: CronExpression;
  try {
    expression = CronExpressionParser.parse(cron, { tz: timezone });
  } catch (error) {
    throw new InvalidOptionError(at('cron'), `${JSON.stringify(cron)} is not a cron expression: ${(error as Error).message}`);
  }
  const from = (date: Date) => {
    expression.reset(date);
    return expression;
  };
  const { uniqueKey, ...enqueueOptions } = options.options ?? {};
  // Validates the kind, payload and options now, not at the first tick.
  assertHandledKind(queue.name, queue.handlers, kind);
  const template = buildEnqueueJob(queue.name, kind, payload, { ...enqueueOptions, uniqueKey: uniqueKey ?? name }, queue.settings);
  // The tick's statement ranks no job, and a fair queue's workers claim ranked jobs only.
  if (template.fairShare) throw new InvalidOptionError(at('queue'), `"${queue.name}" is defined with fairShare, which schedules do not enqueue to yet`);
  if (template.onConflict !== undefined && template.onConflict !== 'return') {
    throw new InvalidOptionError(at('options.onConflict'), 'is not taken by a schedule: a tick whose job is still live is skipped');
  }
  if (template.debounce) throw new InvalidOptionError(at('options.debounce'), 'is not taken by a schedule: each tick is one job already');
  return {
    name,
    catchUp,
    timetable: `${cron} ${timezone}`,
    latestTick(after, until) {
      // prev() gives the last tick strictly before its start: start 1 ms after `until`.
      let tick = from(new Date(until.getTime() + 1)).prev().toDate();
      // prev() also stops on the wall time a DST fall-back repeats (01:30 EST after 01:30
      // EDT), which next() passes over: go back to the tick next() reaches, or a supervisor
      // restarted in the repeated hour would enqueue that day's tick again.
      for (let i = 0; i < MAX_REPEATED_TICKS && tick > after; i++) {
        const before = from(tick).prev().toDate();
        if (from(before).next().toDate().getTime() === tick.getTime()) break;
        tick = before;
      }
      return tick > after ? tick : undefined;
    },
    nextTick(after) {
      return from(after).next().toDate();
    },
    jobFor(tick) {
      return { ...template, runAt: tick, uniqueKey: uniqueKey ?? `${name}@${tick.toISOString()}` };
    },
  };
}
