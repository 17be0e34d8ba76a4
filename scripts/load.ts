/**
 * npm run load [-- --database-url <url>]
 *
 * The load measurement of RELIABILITY.md: one supervisor (concurrency 50, default prefetch)
 * drains 20,000 jobs out of a backlog of 10,000 and then of 100,000 pending jobs, in schemas
 * of its own (dropped after), on the server at --database-url (default
 * $JOBVISOR_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test). It prints what
 * the supervisor held at most, its heap after GC and its event loop's delay, and exits 1 if
 * the heap grew with the backlog (over 16 MiB more) or the loop ever stalled 100 ms or more.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type LoadMeasurement, measureLoad } from './load/measure-load.js';

const { values } = parseArgs({ options: { 'database-url': { type: 'string' } } });
const url = values['database-url'] ?? (process.env.JOBVISOR_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test');
const pool = new pg.Pool({ connectionString: url });
pool.on('error', () => {});

const results: LoadMeasurement[] = [];
for (const backlog of [10_000, 100_000]) {
  const schema = `jv_load_${randomBytes(6).toString('hex')}`;
  try {
    results.push(await measureLoad({ pool, schema, backlog, drain: 20_000 > backlog ? backlog : 20_000, concurrency: 50, samples: 8 }));
  } finally {
    await pool.query(`drop schema if exists "${schema}" cascade`);
  }
}
await pool.end();

for (const r of results) {
  console.log(
    `backlog ${r.backlog}: drained ${r.drained} in ${(r.durationMs / 1000).toFixed(1)} s (${Math.round(r.drained / (r.durationMs / 1000))}/s); ` +
      `held at most ${r.maxHeld} (plus ${r.maxWriting} writing their outcome); heap after GC ${r.heapBeforeMb} MiB before, ${r.heapDuringMb.join(' / ')} MiB during; ` +
      `event-loop delay max ${r.eventLoopDelayMaxMs.toFixed(1)} ms, p99 ${r.eventLoopDelayP99Ms.toFixed(1)} ms; ` +
      `longest busy stretch of its own ${r.longestBusyMs} ms CPU`,
  );
}
const [small, large] = results as [LoadMeasurement, LoadMeasurement];
const growth = Math.max(...large.heapDuringMb) - Math.max(...small.heapDuringMb);
const stall = Math.max(small.eventLoopDelayMaxMs, large.eventLoopDelayMaxMs);
console.log(`heap growth from a 10x backlog: ${growth.toFixed(1)} MiB; longest event-loop stall: ${stall.toFixed(1)} ms`);
if (growth > 16 || stall >= 100) {
  console.log('FAILED: the heap grew with the backlog, or the event loop stalled for 100 ms or more');
  process.exitCode = 1;
}
