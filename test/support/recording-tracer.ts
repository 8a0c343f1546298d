// A recording OpenTelemetry tracer for tests (no SDK is a dependency): spans kept in memory with their parent, trace
// id, attributes and status, and a context manager over AsyncLocalStorage, both registered globally by install().
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  context,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type AttributeValue,
  type Context,
  type ContextManager,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/** One span as recorded. */
export interface RecordedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** The span context it was started under (undefined: a root span). */
  parent: SpanContext | undefined;
  attributes: Record<string, AttributeValue | undefined>;
  status: SpanStatus;
  ended: boolean;
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

class RecordingSpan implements Span {
  constructor(
    private readonly ctx: SpanContext,
    readonly record: RecordedSpan,
  ) {}
  spanContext(): SpanContext {
    return this.ctx;
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
  addLink(_link: Link): this {
    return this;
  }
  addLinks(_links: Link[]): this {
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
  end(_endTime?: TimeInput): void {
    this.record.ended = true;
  }
  isRecording(): boolean {
    return !this.record.ended;
  }
  recordException(): void {}
}

class RecordingTracer implements Tracer {
  constructor(private readonly spans: RecordedSpan[]) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    const parent = options.root === true ? undefined : trace.getSpanContext(ctx);
    const spanContext: SpanContext = {
      traceId: parent?.traceId ?? hex(16),
      spanId: hex(8),
      traceFlags: TraceFlags.SAMPLED,
      ...(parent?.traceState === undefined ? {} : { traceState: parent.traceState }),
    };
    const record: RecordedSpan = {
      name,
      traceId: spanContext.traceId,
      spanId: spanContext.spanId,
      parent,
      attributes: { ...options.attributes },
      status: { code: SpanStatusCode.UNSET },
      ended: false,
    };
    this.spans.push(record);
    return new RecordingSpan(spanContext, record);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F;
    const [options, ctx] = rest as [SpanOptions | undefined, Context | undefined];
    const parent = ctx ?? context.active();
    const span = this.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>;
  }
}

/** Contexts kept across awaits by AsyncLocalStorage, as the SDK's async-hooks context manager does. */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]): unknown =>
      this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** The recorded spans, and how to put the global tracer and context manager back. */
export interface RecordingTracing {
  readonly spans: RecordedSpan[];
  named(name: string): RecordedSpan[];
  uninstall(): void;
}

/** Registers a recording tracer provider and an AsyncLocalStorage context manager as the global ones. */
export function installRecordingTracer(): RecordingTracing {
  const spans: RecordedSpan[] = [];
  const tracer = new RecordingTracer(spans);
  const provider: TracerProvider = { getTracer: () => tracer };
  context.setGlobalContextManager(new AsyncLocalContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    spans,
    named: (name) => spans.filter((s) => s.name === name),
    uninstall() {
      trace.disable();
      context.disable();
    },
  };
}

/** A tracer provider whose spans are never recorded (as a sampler that drops all), counting the spans asked for. */
export function installDroppingTracer(): { started: () => number; uninstall(): void } {
  let started = 0;
  const tracer: Tracer = {
    startSpan(_name, _options, ctx = context.active()) {
      started++;
      const parent = trace.getSpanContext(ctx);
      return trace.wrapSpanContext({
        traceId: parent?.traceId ?? hex(16),
        spanId: hex(8),
        traceFlags: TraceFlags.NONE,
      });
    },
    startActiveSpan(name: string, ...rest: unknown[]) {
      const fn = rest.pop() as (span: Span) => unknown;
      return fn(this.startSpan(name));
    },
  } as Tracer;
  trace.setGlobalTracerProvider({ getTracer: () => tracer });
  return {
    started: () => started,
    uninstall: () => trace.disable(),
  };
}
