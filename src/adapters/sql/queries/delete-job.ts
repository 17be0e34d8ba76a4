import type { JobRecord } from '../../../types.js';
import { jobColumns, toDbId, toJobRecord } from '../job-row.js';
import type { JobRow } from '../job-row.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement } from '../statement.js';

/**
 * Deletes a job and its history (and its mailbox, job_signals: on delete cascade), unless a
 * worker holds it or a waiting job waits for it. The row is locked first, so the answer shows
 * the state the decision was made on and no claim or fenced write can slip in between; a
 * running job is left to its worker, and a job that waiting jobs wait for (a flow's parent, a
 * child added before continuing) is kept, so they are neither stranded waiting nor left
 * without its result (deleted = false). So is a job whose dependent sleeps: it runs its handler
 * from the top when it wakes, and reads its parents again.
 */
const DELETE_JOB = defineStatement(
  'delete_job',
  (s) => `
with target as (
  select id, state from ${s.quoted}.jobs where id = $1 for update
),
deleted as (
  delete from ${s.quoted}.jobs j using target t
  where j.id = t.id and t.state <> 'running'
    and not exists (
      select from ${s.quoted}.job_deps e join ${s.quoted}.jobs w on w.id = e.job_id
      where e.dep_id = t.id and w.state in ('waiting', 'sleeping')
    )
  returning j.*
),
history as (
  delete from ${s.quoted}.job_events where job_id in (select id from deleted)
)
select true as deleted, ${jobColumns('d', s)} from deleted d
union all
select false, ${jobColumns('j', s)} from ${s.quoted}.jobs j join target t on t.id = j.id
where not exists (select from deleted)
`,
);

const LOCK_JOB = defineStatement('lock_job_to_delete', (s) => `select id from ${s.quoted}.jobs where id = $1 for update`);

export async function deleteJob(
  ctx: SqlContext,
  params: { id: string },
): Promise<{ job: JobRecord; deleted: boolean } | null> {
  const id = toDbId(params.id);
  if (id === null) return null;
  // The row lock first, then the delete in a statement of its own: its snapshot is taken once
  // the lock is held, so it sees a dependent that an enqueue holding the lock just committed.
  return ctx.transaction(async (session) => {
    await session.query(ctx.statement(LOCK_JOB).text, [id]);
    const { rows } = await session.query(ctx.statement(DELETE_JOB).text, [id]);
    const row = rows[0] as (JobRow & { deleted: boolean }) | undefined;
    return row ? { job: toJobRecord(row), deleted: row.deleted } : null;
  });
}
