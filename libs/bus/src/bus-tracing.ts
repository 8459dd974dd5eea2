/**
 * W3C trace context on the bus, with `@opentelemetry/api` only (a no-op until a process
 * registers a tracer provider).
 *
 * Every message carries its `traceparent` as a header: request/reply payloads are plain
 * protobuf messages with no field for it, and the bus moves bytes without reading them.
 * Envelopes also carry it in their `traceparent` field (the durable record a consumer stores,
 * e.g. with a scheduled job); a message without the header is continued from that field.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';

export const TRACEPARENT_HEADER = 'traceparent';

/** `headers` plus the active span's `traceparent`, unless they already have one or there is no span. */
export function withTraceHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers?.[TRACEPARENT_HEADER] !== undefined) return headers;
  const active = context.active();
  if (trace.getSpan(active) === undefined) return headers;
  const carrier: Record<string, string> = { ...headers };
  propagation.inject(active, carrier);
  return carrier;
}

/** The context a received message continues: its header, else `fallback` (an envelope's field), else a new trace. */
export function receivedContext(headers: Record<string, string>, fallback: string | undefined): Context {
  const traceparent = headers[TRACEPARENT_HEADER] || fallback;
  return traceparent ? propagation.extract(ROOT_CONTEXT, { [TRACEPARENT_HEADER]: traceparent }) : ROOT_CONTEXT;
}

/** Runs a handler in a CONSUMER (event) or SERVER (request) span of `service`, child of `parent`. */
export function inMessageSpan<T>(
  parent: Context,
  info: { service: string; subject: string; kind: 'event' | 'request'; messageId?: string },
  work: () => Promise<T>,
): Promise<T> {
  const span = trace.getTracer('@runline').startSpan(
    `${info.subject} process`,
    {
      kind: info.kind === 'event' ? SpanKind.CONSUMER : SpanKind.SERVER,
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'process',
        'messaging.destination.name': info.subject,
        ...(info.messageId ? { 'messaging.message.id': info.messageId } : {}),
        'runline.service': info.service,
      },
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work();
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
