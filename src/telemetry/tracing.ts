/**
 * OpenTelemetry spans through the standard `@opentelemetry/api`: one `enqueue <queue>` span
 * per enqueue call (kind producer) and one `process <queue>` span per attempt (kind consumer,
 * a child of the enqueue span's context, kept on the row). Without an SDK the API is a no-op;
 * jobvisor then skips every span call, so the hot path pays one check per job.
 */
import {
  type Attributes,
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { EnqueueJob, EnqueueResult } from '../adapters/store.js';
import type { JobActorFinalState } from '../machines/job-machine.js';
import type { ClaimedJob, JobErrorInfo } from '../types.js';

const TRACER_NAME = 'jobvisor';

/** The tracer of an installed SDK, or undefined while none is registered (the API's no-op). */
export function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME);
}

/** Runs an enqueue inside its span, handing each job the span's context to store. */
export function traceEnqueue(
  queue: string,
  jobs: EnqueueJob[],
  enqueue: (jobs: EnqueueJob[]) => Promise<EnqueueResult[]>,
): Promise<EnqueueResult[]> {
  const tracer = activeTracer();
  if (!tracer) return enqueue(jobs);
  const attributes: Attributes = {
    'messaging.system': 'jobvisor',
    'messaging.operation.name': 'enqueue',
    'messaging.operation.type': 'send',
    'messaging.destination.name': queue,
  };
  if (jobs.length === 1) attributes['jobvisor.job.kind'] = jobs[0]!.kind;
  else attributes['messaging.batch.message_count'] = jobs.length;
  return tracer.startActiveSpan(`enqueue ${queue}`, { kind: SpanKind.PRODUCER, attributes }, async (span) => {
    try {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      const traced = Object.keys(carrier).length === 0 ? jobs : jobs.map((job) => ({ ...job, traceContext: carrier }));
      const results = await enqueue(traced);
      if (results.length === 1) {
        span.setAttribute('messaging.message.id', results[0]!.job.id);
        span.setAttribute('jobvisor.job.created', results[0]!.created);
      }
      return results;
    } catch (error) {
      failSpan(span, error instanceof Error ? error : String(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The span of one attempt, from its handler's start until the actor is final. */
export class AttemptSpan {
  readonly #span: Span;
  readonly #context;

  constructor(tracer: Tracer, job: ClaimedJob) {
    const parent = job.traceContext ? propagation.extract(ROOT_CONTEXT, job.traceContext) : ROOT_CONTEXT;
    this.#span = tracer.startSpan(
      `process ${job.queue}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'jobvisor',
          'messaging.operation.name': 'process',
          'messaging.operation.type': 'process',
          'messaging.destination.name': job.queue,
          'messaging.message.id': job.id,
          'jobvisor.job.kind': job.kind,
          'jobvisor.job.attempt': job.attempt,
          'jobvisor.job.max_attempts': job.maxAttempts,
          ...(job.workerId !== null && { 'jobvisor.worker.id': job.workerId }),
        },
      },
      parent,
    );
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** Runs the handler with this span active, so that its own spans are children of it. */
  run<T>(fn: () => T): T {
    return context.with(this.#context, fn);
  }

  /** Ends the span with the attempt's outcome; a failure or a lost lease sets status error. */
  end(state: JobActorFinalState, error: JobErrorInfo | null): void {
    this.#span.setAttribute('jobvisor.job.outcome', state);
    if (error && (state === 'retrying' || state === 'dead' || state === 'lost')) {
      this.#span.setAttribute('error.type', error.code);
      failSpan(this.#span, { name: error.name ?? error.code, message: error.message, ...(error.stack && { stack: error.stack }) });
    }
    this.#span.end();
  }
}

function failSpan(span: Span, error: Error | string | { name: string; message: string; stack?: string }): void {
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof error === 'string' ? error : error.message });
}
