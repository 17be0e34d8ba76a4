/**
 * Tracing with a real OpenTelemetry SDK, as users install it beside jobvisor:
 * `@opentelemetry/sdk-trace-base` 2.x (which runs on Node 20 and accepts `@opentelemetry/api`
 * below 1.10: jobvisor's peer range takes any 1.x from 1.3). The rest of the tracing tests
 * use a recording tracer (test/support/recording-tracer.ts).
 */
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { createSupervisor, defineQueue } from '../../src/index.js';
import { createTestClock } from '../support/sim.js';

const exporter = new InMemorySpanExporter();

beforeEach(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});

afterEach(() => {
  exporter.reset();
  trace.disable();
  propagation.disable();
  context.disable();
});

it('the SDK sees the enqueue span and the attempt span in its trace', async () => {
  const clock = createTestClock();
  const store = memoryStore({ clock });
  const queue = defineQueue('work', { handlers: { collect: async () => ({ photos: 20 }) } });
  const { job } = await queue.enqueue(store, 'collect', { placeId: 'p1' });
  await createSupervisor({ store, queues: [queue], clock }).drain();
  const spans = exporter.getFinishedSpans();
  const enqueue = spans.find((s) => s.name === 'enqueue work')!;
  const attempt = spans.find((s) => s.name === 'process work')!;
  expect(enqueue).toMatchObject({ kind: SpanKind.PRODUCER, attributes: { 'messaging.message.id': job.id } });
  expect(attempt).toMatchObject({ kind: SpanKind.CONSUMER, attributes: { 'jobvisor.job.outcome': 'completed' } });
  expect(attempt.spanContext().traceId).toBe(enqueue.spanContext().traceId);
  expect(attempt.parentSpanContext?.spanId).toBe(enqueue.spanContext().spanId);
});
