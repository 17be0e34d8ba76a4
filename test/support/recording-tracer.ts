/**
 * A tracer provider that keeps finished spans in memory, with a W3C trace-context propagator
 * and an AsyncLocalStorage context manager: an SDK's behaviour, enough for tests, with spans
 * as plain records. tracing-sdk.test.ts runs the real SDK.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  type ContextManager,
  type Exception,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
  TraceFlags,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

export interface RecordedSpan {
  name: string;
  kind: SpanKind;
  context: SpanContext;
  parentSpanId: string | undefined;
  attributes: Attributes;
  status: SpanStatus;
  exceptions: Array<Exception>;
  links: Link[];
  ended: boolean;
}

class RecordingSpan implements Span {
  constructor(
    readonly record: RecordedSpan,
    private readonly onEnd: (span: RecordedSpan) => void,
  ) {}
  spanContext(): SpanContext {
    return this.record.context;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(link: Link): this {
    this.record.links.push(link);
    return this;
  }
  addLinks(links: Link[]): this {
    this.record.links.push(...links);
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.record.name = name;
    return this;
  }
  end(): void {
    if (this.record.ended) return;
    this.record.ended = true;
    this.onEnd(this.record);
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(exception: Exception): void {
    this.record.exceptions.push(exception);
  }
}

class RecordingTracer implements Tracer {
  constructor(private readonly finished: RecordedSpan[]) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const parent = trace.getSpanContext(ctx);
    const record: RecordedSpan = {
      name,
      kind: options.kind ?? SpanKind.INTERNAL,
      context: {
        traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        traceFlags: TraceFlags.SAMPLED,
      },
      parentSpanId: parent?.spanId,
      attributes: { ...options.attributes },
      status: { code: SpanStatusCode.UNSET },
      exceptions: [],
      links: [...(options.links ?? [])],
      ended: false,
    };
    return new RecordingSpan(record, (span) => this.finished.push(span));
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args.at(-1) as F;
    const options = (typeof args[0] === 'object' ? args[0] : {}) as SpanOptions;
    const ctx = (args.length === 3 ? args[1] : context.active()) as Context;
    const span = this.startSpan(name, options, ctx);
    return context.with(trace.setSpan(ctx, span), () => fn(span)) as ReturnType<F>;
  }
}

class RecordingProvider implements TracerProvider {
  readonly finished: RecordedSpan[] = [];
  getTracer(): Tracer {
    return new RecordingTracer(this.finished);
  }
}

/** W3C `traceparent`, nothing else. */
const traceContextPropagator: TextMapPropagator = {
  inject(ctx, carrier, setter) {
    const span = trace.getSpanContext(ctx);
    if (!span) return;
    setter.set(carrier, 'traceparent', `00-${span.traceId}-${span.spanId}-0${span.traceFlags}`);
  },
  extract(ctx, carrier, getter) {
    const value = getter.get(carrier, 'traceparent');
    const match = typeof value === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([0-9a-f])$/.exec(value) : null;
    if (!match) return ctx;
    return trace.setSpanContext(ctx, { traceId: match[1]!, spanId: match[2]!, traceFlags: Number(match[3]), isRemote: true });
  },
  fields: () => ['traceparent'],
};

class AsyncContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** Installs the recording provider as the global SDK would; `uninstall` puts the no-op back. */
export function installRecordingTracer(): { spans: RecordedSpan[]; uninstall(): void } {
  const provider = new RecordingProvider();
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(traceContextPropagator);
  context.setGlobalContextManager(new AsyncContextManager());
  return {
    spans: provider.finished,
    uninstall() {
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
