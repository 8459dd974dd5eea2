import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createLogger } from './logger.js';
import { currentTraceparent, inSpan, SERVICE_ATTRIBUTE, startTracing, type Tracing } from './tracing.js';

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('startTracing', () => {
  let tracing: Tracing | undefined;
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  it('exports nothing unless OTEL_EXPORTER_OTLP_ENDPOINT is set or an exporter is given, and still continues a traceparent', async () => {
    tracing = startTracing({ serviceName: 'test', environment: {} });
    expect(tracing.exporting).toBe(false);
    // Nothing is recorded, so no span of ours stands between the caller and the next hop: the
    // caller's traceparent goes on as it came (W3C lets a component that does not trace pass it on).
    expect(await inSpan('work', { parent: CALLER }, async () => currentTraceparent())).toBe(CALLER);
    expect(await inSpan('outer', { parent: CALLER }, () => inSpan('inner', {}, async () => currentTraceparent()))).toBe(CALLER);
    // Without a caller's trace, the work still gets a trace of its own (not sampled: nobody records it).
    const fresh = await inSpan('poll', { parent: null }, async () => currentTraceparent());
    expect(fresh).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(fresh).not.toContain('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(await inSpan('poll', { parent: null }, async () => currentTraceparent())).not.toBe(fresh);
  });

  it('switches the OTLP exporter on with OTEL_EXPORTER_OTLP_ENDPOINT: spans are POSTed to <endpoint>/v1/traces', async () => {
    const received: Array<{ path: string; body: string }> = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = collector.address() as AddressInfo;
      tracing = startTracing({ serviceName: 'test-otlp', environment: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/` } });
      expect(tracing.exporting).toBe(true);
      await inSpan('exported work', { parent: CALLER }, async () => undefined);
      // Shutdown flushes the batch.
      await tracing.shutdown();
      tracing = undefined;
      expect(received.map((request) => request.path)).toEqual(['/v1/traces']);
      expect(received[0]!.body).toContain('"exported work"');
      expect(received[0]!.body).toContain('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(received[0]!.body).toContain('"test-otlp"');
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
  });

  it('names the service in the resource (OTEL_SERVICE_NAME wins) and in runline.service, which child spans inherit', async () => {
    const exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'gateway', environment: { OTEL_SERVICE_NAME: 'runline-eu' }, exporter });
    await inSpan('outer', { service: 'invocation', parent: null }, () => inSpan('inner', {}, async () => undefined));
    const [inner, outer] = exporter.getFinishedSpans();
    expect(inner!.resource.attributes['service.name']).toBe('runline-eu');
    expect(outer!.attributes[SERVICE_ATTRIBUTE]).toBe('invocation');
    expect(inner!.attributes[SERVICE_ATTRIBUTE]).toBe('invocation');
    expect(inner!.parentSpanContext?.spanId).toBe(outer!.spanContext().spanId);
    expect(outer!.parentSpanContext).toBeUndefined();
  });

  it('unregisters at shutdown: no provider leaks into the next test', async () => {
    tracing = startTracing({ serviceName: 'test', environment: {} });
    await tracing.shutdown();
    tracing = undefined;
    expect(await inSpan('after', { parent: CALLER }, async () => currentTraceparent())).toBeUndefined();
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('hands a second caller a handle that leaves the first provider in place', async () => {
    tracing = startTracing({ serviceName: 'launcher', environment: {} });
    await startTracing({ serviceName: 'gateway', environment: {} }).shutdown();
    expect(await inSpan('still traced', { parent: CALLER }, async () => currentTraceparent())).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
  });
});

describe('log lines', () => {
  let tracing: Tracing | undefined;
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new PassThrough();
    destination.on('data', (chunk: Buffer) => chunk.toString('utf8').trim().split('\n').forEach((line) => lines.push(JSON.parse(line))));
    return { lines, logger: createLogger({ service: 'test', level: 'info', destination }) };
  };

  it('carry traceId and spanId of the active span', async () => {
    tracing = startTracing({ serviceName: 'test', environment: {} });
    const { lines, logger } = capture();
    const traceparent = await inSpan('work', { parent: CALLER }, async () => {
      logger.info('inside');
      return currentTraceparent();
    });
    logger.info('outside');
    await new Promise((resolve) => setImmediate(resolve));
    const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent!)!;
    expect(lines[0]).toMatchObject({ msg: 'inside', traceId, spanId });
    expect(lines[1]!.msg).toBe('outside');
    expect(lines[1]).not.toHaveProperty('traceId');
  });

  it('carry no trace fields when tracing is off', async () => {
    const { lines, logger } = capture();
    await inSpan('work', { parent: CALLER }, async () => logger.info('inside'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).not.toHaveProperty('traceId');
  });
});
