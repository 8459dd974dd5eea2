import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { instrumentHttp } from './http-instrumentation.js';
import { tracedServerFactory } from './http-tracing.js';
import { currentTraceparent, SERVICE_ATTRIBUTE, startTracing, type Tracing } from './tracing.js';

describe('tracedServerFactory', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let app: FastifyInstance;

  beforeAll(async () => {
    tracing = startTracing({ serviceName: 'test', environment: {}, exporter });
    app = fastify({ serverFactory: tracedServerFactory('gateway') });
    instrumentHttp(app, { registry: new Registry(), logger: pino({ level: 'silent' }) });
    // The body is read first: the handler must still run in the request's span.
    app.post('/things/:id', async () => ({ traceparent: currentTraceparent() }));
    app.get('/health/live', async () => ({ traceparent: currentTraceparent() ?? null }));
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
    await tracing.shutdown();
  });

  const url = (path: string) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;

  it('keeps Fastify’s timeouts', () => {
    expect(app.server.keepAliveTimeout).toBe(72_000);
  });

  it('runs each request in a SERVER span named after its route, child of the caller’s traceparent', async () => {
    exporter.reset();
    const response = await fetch(url('/things/42?secret=x'), {
      method: 'POST',
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    const { traceparent } = (await response.json()) as { traceparent: string };
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({ name: 'POST /things/:id', kind: SpanKind.SERVER });
    expect(span!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(traceparent).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${span!.spanContext().spanId}-01`);
    expect(span!.attributes).toMatchObject({ 'url.path': '/things/42', 'http.route': '/things/:id', 'http.response.status_code': 200, [SERVICE_ATTRIBUTE]: 'gateway' });
  });

  it('starts a new trace without traceparent, and leaves health probes untraced', async () => {
    exporter.reset();
    await (await fetch(url('/things/1'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
    const health = (await (await fetch(url('/health/live'))).json()) as { traceparent: string | null };
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(health.traceparent).toBeNull();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['POST /things/:id']);
    expect(spans[0]!.parentSpanContext).toBeUndefined();
  });
});
