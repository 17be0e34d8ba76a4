/**
 * The inspector observes a supervisor from outside: the supervisor knows nothing of it (no
 * module of the supervisor or the job machine imports the inspector), and an inspector given
 * a supervisor shows its worker and follows its counters.
 */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { InvalidOptionError } from '../../src/errors.js';
import { startInspector } from '../../src/inspector/index.js';
import { createSupervisor, defineQueue, type SupervisorOptions } from '../../src/index.js';

const queue = defineQueue('q', { handlers: { k: async () => null } });

describe('the inspector beside a supervisor', () => {
  it('no module outside the inspector and the CLI imports it', async () => {
    const root = new URL('../../src/', import.meta.url);
    const files = (await readdir(root, { recursive: true })).filter(
      (file) => file.endsWith('.ts') && !file.startsWith('inspector/') && !file.startsWith('cli/'),
    );
    expect(files).toContain('supervisor/supervisor.ts');
    for (const file of files) {
      const text = await readFile(new URL(file, root), 'utf8');
      expect(text, file).not.toMatch(/(from|import\()\s*'[./]*\/inspector\//);
    }
  });

  it('refuses the old `inspector` option with a message that names the replacement', () => {
    const options = { store: memoryStore(), queues: [queue], inspector: { port: 0 } } as SupervisorOptions;
    expect(() => createSupervisor(options)).toThrow(InvalidOptionError);
    expect(() => createSupervisor(options)).toThrow(/startInspector\(\{ store, supervisor \}\)/);
  });

  it('shows the supervisor given to it, and outlives its stop', async () => {
    const store = memoryStore();
    const supervisor = createSupervisor({ store, queues: [queue] });
    await supervisor.start();
    const inspector = await startInspector({ store, supervisor, port: 0, token: 'a-token-of-ours' });
    try {
      const info = await (await fetch(new URL('/api/info', inspector.url))).json();
      expect(info).toEqual(expect.objectContaining({ actions: true, supervisor: { workerId: supervisor.workerId } }));
      await supervisor.stop();
      expect((await fetch(new URL('/api/queues', inspector.url))).status).toBe(200);
    } finally {
      await inspector.close();
    }
  });
});
