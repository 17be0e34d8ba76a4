/**
 * Conformance for what a worker writes when an attempt ends: setStatesIfRunning for each
 * outcome, answered per outcome.
 * Part of describeStoreConformance (conformance.ts), which calls it inside its own describe
 * with a getter for the test's store and clock.
 */
import { describe, expect, it } from 'vitest';
import { BOOM, conformanceKit, type CurrentStore, lease, step, T0, UNKNOWN_ID, WRONG_TOKEN } from './conformance.js';

export function describeOutcomeConformance(current: CurrentStore): void {
  const { store, clock, now, enqueue, claim, claimOne, getJob, history, outcome, setState } = conformanceKit(current);

  describe('setStatesIfRunning', () => {
    it('completed: stores the result, clears error and lease, keeps the worker, sets finishedAt', async () => {
      const created = await enqueue();
      const first = await claimOne();
      expect(await setState(outcome('retrying', lease(first), 0))).toBe(true);
      expect((await getJob(created.id)).error).toEqual(BOOM);
      const second = await claimOne('q', 'w2');
      clock().advance(500);
      expect(await setState({ ...lease(second), state: 'completed', result: { photos: 20, tags: ['a'] } })).toBe(true);
      const job = await getJob(created.id);
      expect(job).toEqual({
        ...second,
        state: 'completed',
        result: { photos: 20, tags: ['a'] },
        error: null,
        leaseToken: null,
        leaseExpiresAt: null,
        workerId: 'w2',
        attempt: 2,
        updatedAt: new Date(T0 + 500),
        finishedAt: new Date(T0 + 500),
      });
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'retrying', 1, 'w1', T0, 'handler_error'),
        step('retrying', 'running', 2, 'w2', T0),
        step('running', 'completed', 2, 'w2', T0 + 500),
      ]);
    });

    it('completed with no result stores null', async () => {
      await enqueue();
      const claimed = await claimOne();
      expect(await setState({ ...lease(claimed), state: 'completed', result: undefined })).toBe(true);
      expect((await getJob(claimed.id)).result).toBeNull();
    });

    it('retrying: sets runAt a delay after the store\'s now and the error, leaves the job unfinished; it is claimed again at runAt', async () => {
      const created = await enqueue();
      const first = await claimOne();
      clock().advance(1_000);
      expect(await setState({ ...lease(first), state: 'retrying', error: BOOM, delayMs: 5_000 })).toBe(true);
      expect(await getJob(created.id)).toEqual({
        ...first,
        state: 'retrying',
        runAt: new Date(T0 + 6_000),
        error: BOOM,
        leaseToken: null,
        leaseExpiresAt: null,
        workerId: 'w1',
        updatedAt: new Date(T0 + 1_000),
        finishedAt: null,
      });
      const events = await store().getJobEvents({ id: created.id });
      expect(events[2]?.error).toEqual(BOOM);

      clock().advance(4_999);
      expect(await claim()).toEqual([]);
      clock().advance(1);
      const second = await claimOne('q', 'w2');
      expect(second).toMatchObject({ id: created.id, attempt: 2, workerId: 'w2', error: BOOM });
      expect(await history(created.id)).toEqual([
        step(null, 'pending', 0, null, T0),
        step('pending', 'running', 1, 'w1', T0),
        step('running', 'retrying', 1, 'w1', T0 + 1_000, 'handler_error'),
        step('retrying', 'running', 2, 'w2', T0 + 6_000),
      ]);
    });

    it.each(['dead', 'skipped', 'cancelled'] as const)('%s: sets the error and finishedAt, clears the lease', async (state) => {
      const created = await enqueue();
      const claimed = await claimOne();
      clock().advance(2_000);
      const o = outcome(state, lease(claimed));
      expect(await setState(o)).toBe(true);
      const error = 'error' in o ? o.error : null;
      expect(await getJob(created.id)).toEqual({
        ...claimed,
        state,
        error,
        result: null,
        leaseToken: null,
        leaseExpiresAt: null,
        workerId: 'w1',
        updatedAt: new Date(T0 + 2_000),
        finishedAt: new Date(T0 + 2_000),
      });
      const events = await store().getJobEvents({ id: created.id });
      expect(events).toHaveLength(3);
      expect(events[2]).toEqual({
        jobId: created.id,
        fromState: 'running',
        toState: state,
        attempt: 1,
        workerId: 'w1',
        at: new Date(T0 + 2_000),
        error,
      });
      expect(await claim()).toEqual([]);
    });

    it('answers per outcome, in input order', async () => {
      for (let i = 0; i < 3; i++) await enqueue();
      const [c1, c2, c3] = await claim('q', 3);
      const applied = await store().setStatesIfRunning({
        outcomes: [
          outcome('completed', lease(c1!)),
          outcome('completed', { id: c2!.id, leaseToken: WRONG_TOKEN }),
          outcome('retrying', lease(c3!)),
          outcome('dead', { id: UNKNOWN_ID, leaseToken: c3!.leaseToken }),
        ],
      });
      expect(applied).toEqual([true, false, true, false]);
      expect((await getJob(c1!.id)).state).toBe('completed');
      expect((await getJob(c2!.id)).state).toBe('running');
      expect((await getJob(c3!.id)).state).toBe('retrying');
      expect(await store().setStatesIfRunning({ outcomes: [] })).toEqual([]);
    });

    it.each([
      ['completed', 'dead'],
      ['dead', 'completed'],
      ['retrying', 'skipped'],
    ] as const)('applies only the first of two outcomes for one job in a batch (%s, then %s)', async (first, second) => {
      const created = await enqueue();
      const claimed = await claimOne();
      const applied = await store().setStatesIfRunning({
        outcomes: [outcome(first, lease(claimed)), outcome(second, lease(claimed))],
      });
      expect(applied).toEqual([true, false]);
      expect((await getJob(created.id)).state).toBe(first);
      expect((await history(created.id)).map((s) => s.toState)).toEqual(['pending', 'running', first]);
    });
  });
}
