/**
 * A working example with no server: a queue with handlers that succeed, retry, fail
 * permanently and hang past their deadline, a shared gate, unique keys, and a dead-job alert.
 * Run it with `npm run example`.
 */
import { createSupervisor, defineQueue, PermanentJobError, type Job } from '../src/index.js';
import { memoryStore } from '../src/adapters/memory/index.js';

const store = memoryStore();
let flakyCalls = 0;

const places = defineQueue('places', {
  concurrency: 4,
  gate: 'gpu',
  maxAttempts: 3,
  deadlineMs: 500,
  backoff: (attempt) => 50 * attempt,
  alertKey: (job) => (job.payload as { placeId?: string }).placeId,
  handlers: {
    collect: async ({ payload }: Job<{ placeId: string }>) => ({ placeId: payload.placeId, photos: 20 }),
    flaky: async ({ attempt }: Job<{ placeId: string }>) => {
      flakyCalls += 1;
      if (attempt < 2) throw new Error('upstream 503');
      return { ok: true, attempt };
    },
    describe: async () => {
      throw new PermanentJobError('place is gone');
    },
    hang: ({ signal }: Job<{ placeId: string }>) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
  },
});

const supervisor = createSupervisor({
  store,
  queues: [places],
  gates: { gpu: 2 },
  pollIntervalMs: 20,
  onDead: (alert) => console.log(`ALERT ${alert.dedupeKey}: ${alert.detail.split('\n')[1]}`),
});

await places.enqueue(store, 'collect', { placeId: 'p1' }, { uniqueKey: 'collect:p1' });
const duplicate = await places.enqueue(store, 'collect', { placeId: 'p1' }, { uniqueKey: 'collect:p1' });
console.log(`unique key collect:p1 → created again? ${duplicate.created}`);
await places.enqueue(store, 'flaky', { placeId: 'p2' });
await places.enqueue(store, 'describe', { placeId: 'p3' });
await places.enqueue(store, 'hang', { placeId: 'p4' }, { maxAttempts: 1 });
await store.enqueueJobs({ jobs: [{ queue: 'places', kind: 'unknown-kind', payload: {}, maxAttempts: 1 }] });

await supervisor.start();
// Wait until nothing is pending, retrying or running.
while ((await store.countJobs()).some((c) => ['pending', 'retrying', 'running'].includes(c.state))) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await supervisor.stop();

for (const job of await store.listJobs({ limit: 10 })) {
  const events = await store.getJobEvents({ id: job.id });
  console.log(`job ${job.id} ${job.kind.padEnd(12)} ${job.state.padEnd(9)} ${events.map((e) => e.toState).join(' → ')}`);
}
console.log(`flaky handler ran ${flakyCalls} times`);
