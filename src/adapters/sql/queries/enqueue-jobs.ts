import { InvalidOptionError, InvalidPayloadError } from '../../../errors.js';
import type { EnqueueJob, EnqueueResult, SqlClient } from '../../store.js';
import { jobColumns, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';
import { COLUMNS_INPUT, toColumns } from './enqueue-input.js';
import { enqueueFairJobs, isFairEnqueue } from './enqueue-fair-jobs.js';
import { enqueueKeyedJobs, isKeyedEnqueue } from './enqueue-keyed-jobs.js';
import { enqueueNewJobs, insertJobsCtes } from './enqueue-new-jobs.js';

/**
 * Bulk enqueue with unique keys (calls without any go to enqueue_new_jobs, which needs none
 * of this): every job of the call in one statement (insertJobsCtes).
 * - ON CONFLICT DO NOTHING on the partial unique index: a job whose unique key is live
 *   (already in the table, or inserted by an earlier input of this batch) is not inserted;
 *   the holder is returned with created = false, read back by primary key (`= any(array(…))`
 *   rather than `in (…)`, which can be planned as a scan of the whole table). Ids are drawn
 *   in input order, so each row maps back to its input even though ON CONFLICT skips some.
 */
const ENQUEUE_JOBS = defineStatement(
  'enqueue_jobs',
  (s) => `${insertJobsCtes(s, {
    input: COLUMNS_INPUT,
    onConflict: `on conflict (queue, unique_key)
    where unique_key is not null and state in ('pending', 'retrying', 'running', 'sleeping')
    do nothing`,
  })},
found as (
  select n.i, x.id is not null as created, coalesce(x.id, d.id, e.id) as id
  from numbered n
  left join inserted x on x.id = n.id
  left join inserted d on x.id is null and d.queue = n.queue and d.unique_key = n.unique_key
  left join ${s.quoted}.jobs e on x.id is null and e.queue = n.queue and e.unique_key = n.unique_key
    and e.state in ('pending', 'retrying', 'running', 'sleeping')
),
job as (
  select * from inserted
  union all
  select * from ${s.quoted}.jobs where id = any(array(select id from found where not created))
)
select f.i, f.created, ${jobColumns('j', s, { when: 'not f.created' })}
from found f join job j on j.id = f.id cross join notified
`,
);

/** A duplicate whose live holder committed after this statement's snapshot is missing from
 *  the answer; asking again for just those finds it (or inserts, if it finished meanwhile). */
const MAX_ROUNDS = 3;
/** jsonb refuses the NUL character (\u0000) in strings. */
const UNTRANSLATABLE_CHARACTER = '22P05';
const INVALID_PARAMETER_VALUE = '22023';
const JOB_TIMES_REFUSAL = /^(runIn|expiresAt|expiresIn): (.*)$/s;

export async function enqueueJobs(
  ctx: SqlContext,
  params: { jobs: readonly EnqueueJob[]; client?: SqlClient },
): Promise<EnqueueResult[]> {
  if (isFairEnqueue(params.jobs)) return asPayloadError(() => enqueueFairJobs(ctx, params));
  if (isKeyedEnqueue(params.jobs)) return asPayloadError(() => enqueueKeyedJobs(ctx, params));
  if (params.jobs.every((job) => job.uniqueKey == null)) {
    return asPayloadError(() => enqueueNewJobs(ctx, params));
  }
  const results: (EnqueueResult | undefined)[] = new Array(params.jobs.length);
  let missing = params.jobs.map((_, i) => i);
  for (let round = 0; round < MAX_ROUNDS && missing.length > 0; round++) {
    const columns = toColumns(missing.map((i) => params.jobs[i]!), missing);
    const rows = await runEnqueue(ctx, columns, params.client);
    for (const row of rows) results[row.i] = { job: toJobRecord(row), created: row.created };
    missing = missing.filter((i) => results[i] === undefined);
  }
  if (missing.length > 0) {
    throw new Error(`enqueueJobs: no live job found for the unique keys of inputs ${missing.join(', ')}`);
  }
  return results as EnqueueResult[];
}

async function runEnqueue(
  ctx: SqlContext,
  columns: (string | null)[],
  client: SqlClient | undefined,
): Promise<(JobRow & { i: number; created: boolean })[]> {
  return asPayloadError(async () => {
    return ctx.run(ENQUEUE_JOBS, [ctx.now(), ...columns], client);
  });
}

export async function asPayloadError<T>(enqueue: () => Promise<T>): Promise<T> {
  try {
    return await enqueue();
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code === UNTRANSLATABLE_CHARACTER) {
      throw new InvalidPayloadError('a payload string holds a character jsonb cannot store (\\u0000)', { cause: error });
    }
    // refuse_job_times (migration 0014): a job's times, wrong once the store resolved them.
    const refused = code === INVALID_PARAMETER_VALUE && typeof message === 'string' ? JOB_TIMES_REFUSAL.exec(message) : null;
    if (refused) throw new InvalidOptionError(refused[1]!, refused[2]!);
    throw error;
  }
}
