import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue, type Job } from '../../src/index.js';
import { activeTracer } from '../../src/telemetry/tracing.js';
import { installRecordingTracer, type RecordedSpan } from '../support/recording-tracer.js';
import { createTestClock } from '../support/sim.js';

describe('tracing without an SDK', () => {
  it('does no span work: no tracer, nothing stored for the trace', async () => {
    expect(activeTracer()).toBeUndefined();
    const store = memoryStore();
    const queue = defineQueue('work', { handlers: { j: async () => 'ok' } });
    const { job } = await queue.enqueue(store, 'j', {});
    expect(job.traceContext).toBeNull();
    await createSupervisor({ store, queues: [queue] }).drain();
    expect((await store.getJob({ id: job.id }))?.state).toBe('completed');
  });
});

describe('tracing with an SDK', () => {
  let recorder: ReturnType<typeof installRecordingTracer>;
  beforeEach(() => {
    recorder = installRecordingTracer();
  });
  afterEach(() => recorder.uninstall());

  const named = (name: string) => recorder.spans.filter((s) => s.name === name);

  function setup(handlers: Record<string, (job: Job) => unknown>) {
    const clock = createTestClock();
    const store = memoryStore({ clock });
    const queue = defineQueue('work', { maxAttempts: 2, backoff: () => 0, handlers });
    const supervisor = createSupervisor({ store, queues: [queue], clock, workerId: 'w1' });
    return { store, queue, supervisor };
  }

  it('an enqueue span, and per attempt a process span in its trace, around the handler', async () => {
    const tracer = trace.getTracer('user-code');
    const { store, queue, supervisor } = setup({
      collect: async () => {
        tracer.startSpan('fetch photos').end();
        return { photos: 20 };
      },
    });
    const { job } = await queue.enqueue(store, 'collect', { placeId: 'p1' });
    const [enqueue] = named('enqueue work');
    expect(enqueue).toMatchObject({
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'jobvisor',
        'messaging.operation.type': 'send',
        'messaging.destination.name': 'work',
        'messaging.message.id': job.id,
        'jobvisor.job.kind': 'collect',
        'jobvisor.job.created': true,
      },
    });
    expect(job.traceContext).toEqual({ traceparent: expect.stringContaining(enqueue!.context.spanId) });

    await supervisor.drain();
    const [process] = named('process work');
    expect(process).toMatchObject({
      kind: SpanKind.CONSUMER,
      parentSpanId: enqueue!.context.spanId,
      context: { traceId: enqueue!.context.traceId },
      status: { code: SpanStatusCode.UNSET },
      attributes: {
        'messaging.operation.type': 'process',
        'messaging.message.id': job.id,
        'jobvisor.job.kind': 'collect',
        'jobvisor.job.attempt': 1,
        'jobvisor.job.outcome': 'completed',
        'jobvisor.worker.id': 'w1',
      },
    });
    expect(named('fetch photos')[0]).toMatchObject({ parentSpanId: process!.context.spanId, context: { traceId: enqueue!.context.traceId } });
  });

  it('a failed attempt sets status error with the exception; each attempt has its own span', async () => {
    const { store, queue, supervisor } = setup({
      flaky: async ({ attempt }: Job) => {
        if (attempt === 1) throw new Error('upstream 503');
        return 'ok';
      },
    });
    await queue.enqueue(store, 'flaky', {});
    await supervisor.drain();
    const attempts = named('process work');
    expect(attempts.map((s) => [s.attributes['jobvisor.job.attempt'], s.attributes['jobvisor.job.outcome'], s.status.code])).toEqual([
      [1, 'retrying', SpanStatusCode.ERROR],
      [2, 'completed', SpanStatusCode.UNSET],
    ]);
    expect(attempts[0]).toMatchObject({
      status: { message: 'upstream 503' },
      attributes: { 'error.type': 'handler_error' },
      exceptions: [expect.objectContaining({ name: 'Error', message: 'upstream 503', stack: expect.stringContaining('upstream 503') })],
    });
    const parents = new Set(attempts.map((s: RecordedSpan) => s.parentSpanId));
    expect(parents.size).toBe(1);
  });

  it('enqueueMany: one span for the batch, its context on every job', async () => {
    const { store, queue } = setup({ j: () => null });
    const results = await queue.enqueueMany(store, [
      { kind: 'j', payload: 1 },
      { kind: 'j', payload: 2 },
    ]);
    const [span] = named('enqueue work');
    expect(span?.attributes['messaging.batch.message_count']).toBe(2);
    expect(new Set(results.map((r) => r.job.traceContext?.traceparent)).size).toBe(1);
  });

  it('an enqueue that throws ends its span with status error', async () => {
    const { store, queue } = setup({ j: () => null });
    store.enqueueJobs = async () => {
      throw new Error('ECONNREFUSED');
    };
    await expect(queue.enqueue(store, 'j', {})).rejects.toThrow('ECONNREFUSED');
    expect(named('enqueue work')[0]?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ECONNREFUSED' });
  });
});
