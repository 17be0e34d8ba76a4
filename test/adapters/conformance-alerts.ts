/**
 * Conformance for the dead-job alert dedupe the store keeps for every worker on it: one
 * alert per key per window, the count held back since carried by the next one, each key on
 * its own. Part of describeStoreConformance (conformance.ts).
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/adapters/store.js';
import type { TestClock } from './conformance.js';

const WINDOW_MS = 60_000;

export function describeAlertConformance(current: () => { store: JobStore; clock: TestClock }): void {
  const claim = (key: string) => current().store.claimAlert({ key, windowMs: WINDOW_MS });

  describe('dead-job alert dedupe', () => {
    it('sends the first alert of a key, holds back the rest of its window, and counts them in the next', async () => {
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: true, suppressed: 0 });
      current().clock.advance(1_000);
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: false });
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: false });
      current().clock.advance(WINDOW_MS - 1_001);
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: false });
      // A window after the last alert sent (not after the last held back).
      current().clock.advance(1);
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: true, suppressed: 3 });
      expect(await claim('job_dead:q:k:p1')).toEqual({ send: false });
    });

    it('keeps each key apart: another key alerting never clears a held-back count', async () => {
      expect(await claim('x')).toEqual({ send: true, suppressed: 0 });
      expect(await claim('x')).toEqual({ send: false });
      current().clock.advance(WINDOW_MS);
      expect(await claim('y')).toEqual({ send: true, suppressed: 0 });
      expect(await claim('x')).toEqual({ send: true, suppressed: 1 });
    });

    it('holds back every claim but one among many at once', async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, () => claim('burst')));
      expect(answers.filter((a) => a.send)).toEqual([{ send: true, suppressed: 0 }]);
      current().clock.advance(WINDOW_MS);
      expect(await claim('burst')).toEqual({ send: true, suppressed: 7 });
    });

    it('prunes a key whose last alert is older than the dead-job cutoff', async () => {
      expect(await claim('old')).toEqual({ send: true, suppressed: 0 });
      expect(await claim('old')).toEqual({ send: false });
      current().clock.advance(10 * WINDOW_MS);
      await current().store.pruneJobs({ deadBefore: new Date(current().clock.now()) });
      // Its row and held-back count are gone: a new first alert.
      expect(await claim('old')).toEqual({ send: true, suppressed: 0 });
    });
  });
}
