/**
 * Conformance for wake-ups: subscribers hear each queue that got work, once per call, and
 * nothing after they left.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it, vi } from 'vitest';
import { conformanceKit, type CurrentStore } from './conformance.js';

export function describeSubscribeConformance(current: CurrentStore): void {
  const { store, enqueue, enqueueOne } = conformanceKit(current);

  describe('subscribe', () => {
    /** Enqueues into a queue no test uses and waits for its wake-up: notifications arrive in
     *  order, so anything an earlier call was going to deliver has arrived by then. */
    async function barrier(woken: string[]): Promise<void> {
      const seen = woken.filter((q) => q === 'barrier').length;
      await store().enqueueJobs({ jobs: [{ queue: 'barrier', kind: 'k', payload: {}, maxAttempts: 1 }] });
      await vi.waitFor(() => expect(woken.filter((q) => q === 'barrier').length).toBe(seen + 1), {
        timeout: 5_000,
        interval: 5,
      });
    }

    it('wakes subscribers once per queue for each enqueue that creates jobs', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      await store().enqueueJobs({
        jobs: [
          { queue: 'a', kind: 'k', payload: 1, maxAttempts: 1 },
          { queue: 'a', kind: 'k', payload: 2, maxAttempts: 1 },
          { queue: 'b', kind: 'k', payload: 3, maxAttempts: 1 },
        ],
      });
      await barrier(woken);
      expect(woken.filter((q) => q === 'a')).toEqual(['a']);
      expect(woken.filter((q) => q === 'b')).toEqual(['b']);
      await unsubscribe();
    });

    it('does not wake for a duplicate that created nothing', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      await enqueue({ queue: 'a', uniqueKey: 'k1' });
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      expect((await enqueueOne({ queue: 'a', uniqueKey: 'k1' })).created).toBe(false);
      await barrier(woken);
      expect(woken).not.toContain('a');
      await unsubscribe();
    });

    it('wakes when retryJob sends a job back', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const job = await enqueue({ queue: 'a' });
      await store().cancelJob({ id: job.id });
      const woken: string[] = [];
      const unsubscribe = await store().subscribe((queue) => woken.push(queue ?? '(any queue)'));
      expect((await store().retryJob({ id: job.id }))?.retried).toBe(true);
      await vi.waitFor(() => expect(woken).toEqual(['a']), { timeout: 5_000, interval: 5 });
      await unsubscribe();
    });

    it('stops waking a subscriber once it unsubscribed', async (ctx) => {
      if (!store().capabilities.notifications) ctx.skip();
      const gone: string[] = [];
      const kept: string[] = [];
      const unsubscribe = await store().subscribe((queue) => gone.push(queue ?? '(any queue)'));
      const unsubscribeKept = await store().subscribe((queue) => kept.push(queue ?? '(any queue)'));
      await enqueue({ queue: 'a' });
      await barrier(kept);
      await vi.waitFor(() => expect(gone).toContain('barrier'), { timeout: 5_000, interval: 5 });
      await unsubscribe();
      await enqueue({ queue: 'b' });
      await vi.waitFor(() => expect(kept).toContain('b'), { timeout: 5_000, interval: 5 });
      await barrier(kept);
      expect(gone).toEqual(['a', 'barrier']);
      await unsubscribeKept();
    });
  });
}
