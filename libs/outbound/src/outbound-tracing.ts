import { context, isSpanContextValid, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanOptions } from '@opentelemetry/api';
import { randomTraceId } from './trace-ids.js';

/** How the span of one outbound request is named (`http node <id>`, `poll GET`, `callback POST`); the method by default. */
export interface OutboundSpan {
  name: string;
  /** Added to the span's own (method, server address and port, scheme, response status). */
  attributes?: Attributes;
}

/**
 * Runs one outbound exchange in a CLIENT span of its own (child of the active span: the run, the
 * callback attempt, the poll) and sends that span's W3C `traceparent` on, unless the caller set
 * that header itself (an http node's author may mean to). `@opentelemetry/api` only: without
 * any trace context (tracing not started, no span active) no header is added. Attributes name
 * the server, never the path or query, which may carry what a customer would not want recorded.
 */
export async function inClientSpan<T extends { status: number }>(
  method: string,
  url: string | URL,
  headers: Record<string, string>,
  send: () => Promise<T>,
  named: OutboundSpan = { name: method },
): Promise<T> {
  const target = typeof url === 'string' ? URL.parse(url) : url;
  const parent = context.active();
  const attributes: Attributes = { ...named.attributes, 'http.request.method': method };
  if (target !== null) {
    attributes['server.address'] = target.hostname;
    attributes['url.scheme'] = target.protocol.slice(0, -1);
    if (target.port !== '') attributes['server.port'] = Number(target.port);
  }
  const span = startClientSpan(named.name, { kind: SpanKind.CLIENT, attributes }, parent);
  const active = trace.setSpan(parent, span);
  if (!hasHeader(headers, 'traceparent')) propagation.inject(active, headers);
  try {
    const response = await context.with(active, send);
    span.setAttribute('http.response.status_code', response.status);
    if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    return response;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A span under `parent` whose span id is its own, recorded or not. A registered SDK tracer
 * provider sees to that itself (a span it does not sample still gets a new id). Without one
 * (no exporter configured: `startTracing` registers none) the API's no-op tracer hands back the
 * parent's span context as the "new" span, so a request would name its caller's span as its own
 * parent. Here it gets a span context of its own instead: the parent's trace, flags and trace
 * state, a new span id (W3C: a new parent-id for every outbound request), recorded nowhere.
 */
export function startClientSpan(name: string, options: SpanOptions, parent: Context): Span {
  const span = trace.getTracer('@runline').startSpan(name, options, parent);
  const parentContext = trace.getSpanContext(parent);
  if (!parentContext || !isSpanContextValid(parentContext) || span.spanContext().spanId !== parentContext.spanId) return span;
  const { traceId, traceFlags, traceState } = parentContext;
  return trace.wrapSpanContext({ traceId, spanId: randomTraceId(8), traceFlags, ...(traceState ? { traceState } : {}) });
}

/** Whether `headers` has `lowerName`, in any case. */
function hasHeader(headers: Record<string, string>, lowerName: string): boolean {
  for (const name in headers) if (name.length === lowerName.length && name.toLowerCase() === lowerName) return true;
  return false;
}
