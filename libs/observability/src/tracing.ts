/**
 * OpenTelemetry for the whole process, set up in one place.
 *
 * `startTracing` sets up trace context for the process (AsyncLocalStorage context, W3C trace
 * context propagation). Spans are made only when they leave the process: when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (OTLP over HTTP, batched) or a test passes its own
 * exporter, a Node tracer provider is registered. Otherwise no provider is: the API's no-op
 * tracer carries the caller's span context on unchanged (`startSpan` below gives a request
 * without one a trace of its own), so a `traceparent` is still continued and sent on and logs
 * still carry trace ids, without the cost of recording spans nobody reads (about 45 µs of CPU
 * per gateway request, bench/README.md "Traces"). Only a request that leaves the system (an http
 * node's, a poll's, a callback's: `@runline/outbound`) then gets a span id of its own, unrecorded,
 * so the `traceparent` it sends never names the caller's span (W3C: a new id per request).
 *
 * The libs that make spans (bus, outbound, contracts) use only `@opentelemetry/api`, which is a
 * no-op until this provider is registered.
 */
import { randomUUID } from 'node:crypto';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  isSpanContextValid,
  type Attributes,
  type Context,
  type Span,
  type SpanOptions as ApiSpanOptions,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** Attribute naming the Runline service that made a span (all services may share one process). */
export const SERVICE_ATTRIBUTE = 'runline.service';

/** Instrumentation scope of the spans our own code makes. */
export const TRACER_NAME = '@runline';

export interface TracingOptions {
  /** `service.name` of the resource; `OTEL_SERVICE_NAME` overrides it. */
  serviceName: string;
  environment?: NodeJS.ProcessEnv;
  /** Exports every span at its end (tests: an `InMemorySpanExporter`). */
  exporter?: SpanExporter;
}

export interface Tracing {
  /** True when spans leave the process (an OTLP endpoint or a test exporter). */
  readonly exporting: boolean;
  /** Flushes and unregisters the provider, so a later `startTracing` (another test) starts clean. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/**
 * Registers the process's tracer provider. A second call while one is registered (the launcher
 * sets it up, then starts every service) returns a handle whose `shutdown` does nothing.
 */
export function startTracing(options: TracingOptions): Tracing {
  if (active) return { exporting: active.exporting, shutdown: async () => undefined };
  const environment = options.environment ?? process.env;
  const processors: SpanProcessor[] = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor(options.exporter));
  if (environment.OTEL_EXPORTER_OTLP_ENDPOINT) processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(environment) })));
  // Trace context only: baggage is not something we pass on to customers' endpoints.
  const propagator = new W3CTraceContextPropagator();
  let provider: NodeTracerProvider | undefined;
  if (processors.length > 0) {
    // Every exported span says which service made it.
    processors.unshift(new ServiceAttributeProcessor());
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: environment.OTEL_SERVICE_NAME || options.serviceName }),
      spanProcessors: processors,
    });
    provider.register({ propagator });
  } else {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(propagator);
  }
  const handle: Tracing = {
    exporting: processors.length > 0,
    async shutdown() {
      if (active !== handle) return;
      active = undefined;
      await provider?.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  active = handle;
  return handle;
}

/** Where spans go, as the OTLP specification derives it: the traces endpoint, else `<endpoint>/v1/traces`. */
function tracesUrl(environment: NodeJS.ProcessEnv): string {
  const traces = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return traces;
  return `${(environment.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/+$/, '')}/v1/traces`;
}

/** The W3C `traceparent` of the active span, or undefined outside any span (or with tracing off). */
export function currentTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 1).toString(16)}`;
}

/** `{ traceId, spanId }` of the active span, for a log line; empty outside any span. */
export function traceFields(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return traceId && traceId !== '00000000000000000000000000000000' ? { traceId, spanId } : {};
}

/** The context a stored or received `traceparent` continues; the root context (a new trace) without one. */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

export interface SpanOptions {
  /** The `traceparent` to continue (a stored one); default: the active context. `null`: a new trace. */
  parent?: string | null;
  kind?: SpanKind;
  /** The service the work belongs to (`runline.service`). */
  service?: string;
  attributes?: Attributes;
}

/**
 * Runs `work` in a new span (active while it runs), ended when `work` settles; a throw marks the
 * span as an error and is rethrown. Cheap when tracing is off: the API's no-op tracer.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent === undefined ? context.active() : contextOf(options.parent);
  const attributes = options.service ? { ...options.attributes, [SERVICE_ATTRIBUTE]: options.service } : options.attributes;
  const span = startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span of ours under `parent`. When spans are not recorded (no exporter: the no-op tracer),
 * the span carries the parent's context on, and a span without a parent gets a new trace id,
 * not sampled (nothing here records it), so every request still has a trace to pass on and log.
 */
export function startSpan(name: string, options: ApiSpanOptions, parent: Context): Span {
  const span = trace.getTracer(TRACER_NAME).startSpan(name, options, parent);
  if (isSpanContextValid(span.spanContext())) return span;
  // randomUUID draws from a cached pool (a fresh randomBytes per request showed in the gateway's profile).
  const ids = randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', '');
  return trace.wrapSpanContext({ traceId: ids.slice(0, 32), spanId: ids.slice(32, 48), traceFlags: TraceFlags.NONE });
}

/** Copies `runline.service` from the parent span, so spans made in the libs say whose they are. */
class ServiceAttributeProcessor implements SpanProcessor {
  onStart(span: Parameters<SpanProcessor['onStart']>[0], parentContext: Context): void {
    if (span.attributes[SERVICE_ATTRIBUTE] !== undefined) return;
    const parent = trace.getSpan(parentContext) as Partial<ReadableSpan> | undefined;
    const service = parent?.attributes?.[SERVICE_ATTRIBUTE];
    if (service !== undefined) span.setAttribute(SERVICE_ATTRIBUTE, service);
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export { SpanKind };
