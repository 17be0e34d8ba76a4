import type { AlertClaim } from '../../store.js';
import type { SqlContext } from '../sql-context.js';
import { defineStatement, NOW } from '../statement.js';

/**
 * The right to send one dead-job alert, by compare-and-set on the key's row: sent when the
 * key has no row or its last alert is at least a window old (the count held back since goes
 * out with it, kept as `reported`, and starts again at 0); otherwise the row counts one more
 * held back. The SET expressions read the row as it was; the row is locked for the statement
 * (insert … on conflict do update), so two workers can never both send within a window.
 */
const CLAIM_ALERT = defineStatement(
  'claim_alert',
  (s) => `
insert into ${s.quoted}.alerts as a (dedupe_key, sent_at, suppressed, reported) values ($2, ${NOW}, 0, 0)
on conflict (dedupe_key) do update set
  reported = case when a.sent_at <= ${NOW} - $3::float8 * interval '1 millisecond' then a.suppressed else a.reported end,
  sent_at = case when a.sent_at <= ${NOW} - $3::float8 * interval '1 millisecond' then ${NOW} else a.sent_at end,
  suppressed = case when a.sent_at <= ${NOW} - $3::float8 * interval '1 millisecond' then 0 else a.suppressed + 1 end
returning a.sent_at = ${NOW} and a.suppressed = 0 as send, a.reported as held_back
`,
);

export async function claimAlert(ctx: SqlContext, params: { key: string; windowMs: number }): Promise<AlertClaim> {
  const [row] = await ctx.run<{ send: boolean; held_back: number }>(CLAIM_ALERT, [ctx.now(), params.key, params.windowMs]);
  if (!row) throw new Error('claim_alert returned no row');
  return row.send ? { send: true, suppressed: row.held_back } : { send: false };
}
