/**
 * After a claim round a started supervisor asks the store when the next job is due
 * (`nextDueIn`), at most once a poll interval. A store that does not answer must not hold up
 * the claims: the round waits a poll interval at most, and no other ask goes out until the
 * first has answered.
 */
import { describe, expect, it } from 'vitest';
import { advance, deferred, until } from '../support/sim.js';
import { supervisorHarness } from './harness.js';

const POLL_MS = 1_000;

describe('supervisor: asking when the next job is due', () => {
  const { setup } = supervisorHarness();

  function withNextDue(nextDueIn: () => Promise<number | null>) {
    const ran: string[] = [];
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const harness = setup({ handlers: { k: async (job: { id: string }) => void ran.push(job.id) } }, { pollIntervalMs: POLL_MS, logger });
    let asked = 0;
    harness.store.nextDueIn = () => {
      asked += 1;
      return nextDueIn();
    };
    return { ...harness, ran, warnings, asked: () => asked };
  }

  it('a call that never answers holds up one round by a poll interval, and no claim after it', async () => {
    const { clock, store, queue, supervisor, ran, warnings, asked } = withNextDue(() => new Promise(() => {}));
    await supervisor.start();
    await until('the first round asked', () => asked() === 1);
    const { job: first } = await queue.enqueue(store, 'k', {});
    await advance(clock, POLL_MS, 100);
    await until('the first job ran', () => ran.includes(first.id));
    expect(warnings).toEqual(['the store has not answered when the next job is due; claims go on by polling']);
    for (let i = 0; i < 3; i++) {
      const { job } = await queue.enqueue(store, 'k', {});
      await advance(clock, POLL_MS, 100);
      await until(`job ${i + 2} ran`, () => ran.includes(job.id));
    }
    // Not asked again while the first call is out, and warned of once.
    expect(asked()).toBe(1);
    expect(warnings).toHaveLength(1);
  });

  it('once the call answers, however late, the store is asked again', async () => {
    const answers: Array<ReturnType<typeof deferred<number | null>>> = [];
    const { clock, supervisor, warnings, asked } = withNextDue(() => {
      const answer = deferred<number | null>();
      answers.push(answer);
      return answer.promise;
    });
    await supervisor.start();
    await until('the first round asked', () => asked() === 1);
    await advance(clock, 3 * POLL_MS, 100);
    expect(asked()).toBe(1);
    expect(warnings).toHaveLength(1);
    answers[0]!.resolve(null);
    await advance(clock, 2 * POLL_MS, 100);
    await until('asked again', () => asked() === 2);
  });

  it('an answer in time is waited for, without a warning', async () => {
    const { clock, store, queue, supervisor, ran, warnings, asked } = withNextDue(async () => null);
    await supervisor.start();
    const { job } = await queue.enqueue(store, 'k', {});
    await advance(clock, POLL_MS, 100);
    await until('the job ran', () => ran.includes(job.id));
    await advance(clock, 2 * POLL_MS, 100);
    expect(asked()).toBeGreaterThanOrEqual(2);
    expect(warnings).toEqual([]);
  });
});
