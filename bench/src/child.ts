/**
 * One measured run in its own process (forked by main.ts): one system, one scenario, one
 * fresh schema, so no system's heap, JIT state or pools colour another's figures.
 */
import pg from 'pg';
import { markLatencyPath } from './latency-path.js';
import { countQueries } from './query-counter.js';
import type { ChildMessage, RunSpec } from './run-spec.js';
import { runScenario } from './scenarios.js';
import { systemConnectionString } from './server-cost.js';
import { openSystem } from './systems/index.js';

const spec = JSON.parse(process.argv[2] ?? '') as RunSpec;
const send = (message: ChildMessage) =>
  new Promise<void>((resolve) => (process.send ? process.send(message, () => resolve()) : (console.log(JSON.stringify(message)), resolve())));

countQueries(spec.jobvisorRoot);
if (spec.kind === 'latency') markLatencyPath(spec.jobvisorRoot);
try {
  const admin = new pg.Client({ connectionString: spec.connectionString });
  await admin.connect();
  const sys = await openSystem(spec.system, {
    connectionString: systemConnectionString(spec.connectionString, spec.schema),
    readerConnectionString: spec.connectionString,
    schema: spec.schema,
    jobvisorRoot: spec.jobvisorRoot,
  });
  try {
    const result = await runScenario(spec, sys, admin);
    await send({ ok: true, result });
  } finally {
    await sys.close();
    await admin.end();
  }
} catch (error) {
  await send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
}
// A system that leaves a timer or socket behind must not keep the run alive.
process.exit();
