/** `jobvisor flow <id>`'s tree, from a flow on the memory store. */
import { describe, expect, it } from 'vitest';
import { describeFlow } from '../../src/cli/commands/flow.js';
import { memoryStore } from '../../src/testing/index.js';

const plain = (_style: unknown, text: string) => text;

describe('jobvisor flow', () => {
  it('draws each job under the job it waits for, with its state and what it still waits for', async () => {
    const store = memoryStore({ clock: { now: () => Date.UTC(2030, 0, 1) } });
    const job = (node: string, dependsOn: Array<{ index: number; name: string }> = []) => ({
      queue: 'reports', kind: node, payload: {}, maxAttempts: 1, node,
      dependsOn: dependsOn.map((d) => ({ ...d, onFailure: 'cancel' as const })),
    });
    const flow = await store.enqueueFlow({
      name: 'report',
      jobs: [job('sales'), job('costs'), job('merge', [{ index: 0, name: 'sales' }, { index: 1, name: 'costs' }]), job('publish', [{ index: 2, name: 'merge' }])],
    });
    const [sales] = await store.claimJobs({ workerId: 'w', leaseMs: 1_000, queues: [{ queue: 'reports', limit: 1 }] });
    await store.setStatesIfRunning({ outcomes: [{ id: sales!.id, leaseToken: sales!.leaseToken, state: 'completed', result: 1 }] });
    const [s, c, m, p] = flow.jobs.map((j) => j.id);
    expect(describeFlow((await store.getFlow({ id: flow.flowId }))!, plain)).toEqual([
      `flow ${flow.flowId}  report  created 2030-01-01 00:00:00Z  (4 jobs: 1 completed, 1 pending, 2 waiting)`,
      `sales  #${s}  reports/sales  completed`,
      `└─ merge  #${m}  reports/merge  waiting  after sales, costs  waits for costs`,
      `   └─ publish  #${p}  reports/publish  waiting  waits for merge`,
      `costs  #${c}  reports/costs  pending`,
    ]);
  });
});
