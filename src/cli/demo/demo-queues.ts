/**
 * The demo's queues: the handlers of a small shop's background work. What each job does is
 * decided by its payload (a flaky SMTP server, a webhook host that is down, a deleted
 * account), so every run ends the same way; only the timings vary a little.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PermanentJobError, SkipJobError } from '../../errors.js';
import { defineQueue, type Job } from '../../queue.js';

/** Counts the jobs inside the shared `gpu` gate, to show that it held. */
export interface GateMeter {
  readonly size: number;
  peak: number;
}

export const GPU_GATE_SIZE = 2;

export function createDemoQueues() {
  const gpu: GateMeter = { size: GPU_GATE_SIZE, peak: 0 };
  let inGate = 0;
  const onGpu = async <R>(work: () => Promise<R>): Promise<R> => {
    inGate += 1;
    gpu.peak = Math.max(gpu.peak, inGate);
    try {
      return await work();
    } finally {
      inGate -= 1;
    }
  };

  const emails = defineQueue('emails', {
    concurrency: 3,
    maxAttempts: 3,
    backoff: (attempt) => 200 * attempt,
    alertKey: (job) => job.payload.userId,
    handlers: {
      welcome: async ({ payload, signal }: Job<{ userId: string; email: string }>) => {
        if (payload.email.endsWith('@unsubscribed.example')) throw new SkipJobError(`${payload.userId} unsubscribed`);
        await sleep(work(payload.userId, 150, 300), undefined, { signal });
        return { messageId: `<${payload.userId}@mail.example>` };
      },
      digest: async ({ payload, attempt, signal }: Job<{ userId: string }>) => {
        await sleep(work(payload.userId, 100, 200), undefined, { signal });
        if (attempt === 1) throw new Error('SMTP 421 4.7.0 try again later');
        return { sent: true };
      },
    },
  });

  const thumbnails = defineQueue('thumbnails', {
    concurrency: 3,
    gate: 'gpu',
    maxAttempts: 2,
    deadlineMs: 1_000,
    backoff: () => 200,
    alertKey: (job) => job.payload.photoId,
    handlers: {
      resize: ({ payload, signal }: Job<{ photoId: string; width: number }>) =>
        onGpu(async () => {
          await sleep(work(payload.photoId, 150, 250), undefined, { signal });
          return { photoId: payload.photoId, width: payload.width };
        }),
      // Never finishes by itself: the deadline aborts its signal, twice, and it is dead.
      upscale: ({ signal }: Job<{ photoId: string; factor: number }>) =>
        onGpu(() => sleep(3_600_000, undefined, { signal, ref: false })),
    },
  });

  const reports = defineQueue('reports', {
    concurrency: 2,
    gate: 'gpu',
    maxAttempts: 3,
    alertKey: (job) => job.payload.account,
    handlers: {
      render: ({ payload, signal }: Job<{ account: string; month: string }>) =>
        onGpu(async () => {
          if (payload.account.endsWith('-deleted')) throw new PermanentJobError(`account ${payload.account} no longer exists`);
          await sleep(work(payload.account + payload.month, 300, 300), undefined, { signal });
          return { pages: 12 };
        }),
    },
  });

  const webhooks = defineQueue('webhooks', {
    concurrency: 2,
    maxAttempts: 3,
    backoff: (attempt) => 250 * attempt,
    alertKey: (job) => new URL(job.payload.url).host,
    handlers: {
      deliver: async ({ payload, attempt, signal }: Job<{ url: string; event: string }>) => {
        await sleep(work(payload.url, 100, 200), undefined, { signal });
        const host = new URL(payload.url).host;
        if (host.startsWith('down.') || (host.startsWith('flaky.') && attempt < 3)) {
          throw new Error(`POST ${payload.url}: 503 Service Unavailable`);
        }
        return { status: 200 };
      },
    },
  });

  return { queues: [emails, thumbnails, reports, webhooks] as const, gates: { gpu: GPU_GATE_SIZE }, gpu };
}

export type DemoQueues = ReturnType<typeof createDemoQueues>['queues'];

/** A duration between `min` and `min + spread` ms, fixed per key. */
function work(key: string, min: number, spread: number): number {
  let hash = 0;
  for (const char of key) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return min + (hash % spread);
}
