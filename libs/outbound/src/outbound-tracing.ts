import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Runs one outbound exchange in a CLIENT span (child of the active span: the run, the callback
 * attempt, the poll) and sends its W3C `traceparent` on, unless the caller set that header
 * itself (an http node's author may mean to). `@opentelemetry/api` only: without a registered
 * tracer provider no header is added. Attributes name the server, never the path or query,
 * which may carry what a customer would not want recorded.
 */
export async function inClientSpan<T extends { status: number }>(
  method: string,
  url: string,
  headers: Record<string, string>,
  send: () => Promise<T>,
): Promise<T> {
  const target = parseUrl(url);
  const span = trace.getTracer('@runline').startSpan(method, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      ...(target ? { 'server.address': target.hostname, 'url.scheme': target.protocol.replace(':', '') } : {}),
      ...(target?.port ? { 'server.port': Number(target.port) } : {}),
    },
  });
  const active = trace.setSpan(context.active(), span);
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'traceparent')) propagation.inject(active, headers);
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

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
