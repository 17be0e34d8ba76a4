/** The jobs the demo enqueues: a realistic mix, each one there to show one path. */
import type { JobStore } from '../../adapters/store.js';
import type { DemoQueues } from './demo-queues.js';

export interface DemoJobs {
  /** Every job this run enqueued (or was handed back for a unique key), by id. */
  ids: Set<string>;
  /** The second enqueue of a unique key, and the job it returned. */
  duplicate: { uniqueKey: string; id: string; created: boolean };
  /** A job due tomorrow, which the demo cancels while it waits. */
  scheduledId: string;
}

export async function enqueueDemoJobs(store: JobStore, [emails, thumbnails, reports, webhooks]: DemoQueues): Promise<DemoJobs> {
  const users = ['ana', 'bo', 'chen', 'dara', 'eli', 'fay', 'gus'];
  const results = [
    ...(await emails.enqueueMany(store, [
      ...users.map((user) => ({
        kind: 'welcome' as const,
        payload: { userId: user, email: `${user}@shop.example` },
        uniqueKey: `welcome:${user}`,
      })),
      { kind: 'welcome' as const, payload: { userId: 'hal', email: 'hal@unsubscribed.example' }, uniqueKey: 'welcome:hal' },
      ...['ana', 'bo', 'chen'].map((user) => ({ kind: 'digest' as const, payload: { userId: user } })),
    ])),
    ...(await thumbnails.enqueueMany(store, [
      ...Array.from({ length: 10 }, (_, i) => ({ kind: 'resize' as const, payload: { photoId: `photo-${i + 1}`, width: 320 } })),
      { kind: 'upscale' as const, payload: { photoId: 'photo-11', factor: 8 } },
    ])),
    ...(await reports.enqueueMany(store, [
      ...['2026-03', '2026-04', '2026-05'].map((month) => ({
        kind: 'render' as const,
        payload: { account: 'acme', month },
        uniqueKey: `monthly:acme:${month}`,
      })),
      { kind: 'render' as const, payload: { account: 'globex-deleted', month: '2026-05' } },
    ])),
    ...(await webhooks.enqueueMany(store, [
      ...['shop', 'crm', 'flaky', 'down'].map((host) => ({
        kind: 'deliver' as const,
        payload: { url: `https://${host}.hooks.example/orders`, event: 'order.paid' },
      })),
    ])),
    // Deployed before its handler: no worker knows the kind, so the job is skipped, not lost.
    ...(await store.enqueueJobs({ jobs: [{ queue: 'emails', kind: 'newsletter', payload: { issue: 42 }, maxAttempts: 3 }] })),
  ];
  // The same monthly report asked for twice: the live job is returned, nothing is added.
  const duplicateKey = 'monthly:acme:2026-05';
  const duplicate = await reports.enqueue(store, 'render', { account: 'acme', month: '2026-05' }, { uniqueKey: duplicateKey });
  const scheduled = await webhooks.enqueue(
    store,
    'deliver',
    { url: 'https://shop.hooks.example/reminders', event: 'cart.abandoned' },
    { runAt: new Date(Date.now() + 86_400_000) },
  );
  return {
    ids: new Set([...results, duplicate, scheduled].map((r) => r.job.id)),
    duplicate: { uniqueKey: duplicateKey, id: duplicate.job.id, created: duplicate.created },
    scheduledId: scheduled.job.id,
  };
}
