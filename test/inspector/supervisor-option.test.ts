import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue } from '../../src/index.js';

const queue = defineQueue('q', { handlers: { k: async () => null } });

describe('createSupervisor({ inspector })', () => {
  it('serves the inspector while started, beside this supervisor, and closes it on stop', async () => {
    const supervisor = createSupervisor({ store: memoryStore(), queues: [queue], inspector: { port: 0, token: 'a-token-of-ours' } });
    expect(supervisor.inspector).toBeUndefined();
    await supervisor.start();
    const url = supervisor.inspector!.url;
    const info = await (await fetch(new URL('/api/info', url))).json();
    expect(info).toEqual(expect.objectContaining({ actions: true, supervisor: { workerId: supervisor.workerId } }));
    await supervisor.stop();
    await expect(fetch(new URL('/api/info', url))).rejects.toThrow();
  });

  it('runs without it, with a warning, when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const store = memoryStore();
    const supervisor = createSupervisor({ store, queues: [queue], logger, inspector: { port } });
    await supervisor.start();
    expect(supervisor.inspector).toBeUndefined();
    expect(warnings).toContain('inspector did not start; the supervisor runs without it');
    await queue.enqueue(store, 'k', {});
    await supervisor.stop();
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });
});
