import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { inClientSpan, startClientSpan } from './outbound-tracing.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** The context a received `traceparent` (and `tracestate`) continues, as the services extract it. */
const continuing = (flags: '00' | '01', tracestate?: string): Context =>
  propagation.extract(ROOT_CONTEXT, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-${flags}`, ...(tracestate ? { tracestate } : {}) });

const ok = async () => ({ status: 200 });

/** Sends one request in `parent` and returns the headers it would carry. */
async function headersSentIn(parent: Context, headers: Record<string, string> = {}): Promise<Record<string, string>> {
  await context.with(parent, () => inClientSpan('POST', 'https://hooks.example.com:8443/path?token=x', headers, ok));
  return headers;
}

describe('outbound spans', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  describe('without a tracer provider (no exporter: nothing is recorded)', () => {
    it('gives each request a span id of its own in the caller’s trace, with its flags and trace state', async () => {
      const parent = continuing('01', 'vendor=abc');
      const span = startClientSpan('POST', { kind: SpanKind.CLIENT }, parent);
      expect(span.isRecording()).toBe(false);
      expect(span.spanContext()).toMatchObject({ traceId: TRACE_ID, traceFlags: TraceFlags.SAMPLED });
      expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.spanContext().spanId).not.toBe(CALLER_SPAN_ID);
      expect(span.spanContext().traceState?.get('vendor')).toBe('abc');

      const first = await headersSentIn(parent);
      const second = await headersSentIn(parent);
      const [, traceId, spanId, flags] = TRACEPARENT.exec(first.traceparent!)!;
      expect([traceId, flags]).toEqual([TRACE_ID, '01']);
      expect(spanId).not.toBe(CALLER_SPAN_ID);
      expect(TRACEPARENT.exec(second.traceparent!)![2]).not.toBe(spanId);
      expect(first.tracestate).toBe('vendor=abc');
    });

    it('keeps an unsampled trace unsampled', async () => {
      const { traceparent } = await headersSentIn(continuing('00'));
      expect(traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-(?!${CALLER_SPAN_ID})[0-9a-f]{16}-00$`));
    });

    it('adds no traceparent outside any trace, and keeps one the caller set', async () => {
      expect(await headersSentIn(ROOT_CONTEXT)).toEqual({});
      const own = { TraceParent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01` };
      expect(await headersSentIn(continuing('01'), { ...own })).toEqual(own);
    });

    it('makes the request’s span the active one while it is sent', async () => {
      const parent = continuing('01');
      const headers: Record<string, string> = {};
      const activeWhileSending = await context.with(parent, () =>
        inClientSpan('GET', 'http://127.0.0.1/', headers, async () => ({ status: 204, span: trace.getActiveSpan()?.spanContext().spanId })),
      );
      expect(headers.traceparent).toContain(`-${activeWhileSending.span}-`);
    });
  });

  describe('with a tracer provider', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    beforeAll(() => trace.setGlobalTracerProvider(provider));
    afterAll(async () => {
      await provider.shutdown();
      trace.disable();
    });
    beforeEach(() => exporter.reset());

    it('records the request’s CLIENT span, child of the active span, under the given name, and sends its id', async () => {
      const runSpan = trace.getTracer('test').startSpan('run', {}, continuing('01'));
      const runContext = trace.setSpan(continuing('01'), runSpan);
      const headers: Record<string, string> = {};
      await context.with(runContext, () =>
        inClientSpan('POST', 'https://hooks.example.com:8443/path?token=x', headers, async () => ({ status: 503 }), {
          name: 'http node notify',
          attributes: { 'runline.node_id': 'notify' },
        }),
      );
      runSpan.end();
      const [span] = exporter.getFinishedSpans();
      expect(span).toMatchObject({ name: 'http node notify', kind: SpanKind.CLIENT });
      expect(span!.parentSpanContext?.spanId).toBe(runSpan.spanContext().spanId);
      expect(headers.traceparent).toBe(`00-${TRACE_ID}-${span!.spanContext().spanId}-01`);
      expect(span!.attributes).toEqual({
        'runline.node_id': 'notify',
        'http.request.method': 'POST',
        'server.address': 'hooks.example.com',
        'server.port': 8443,
        'url.scheme': 'https',
        'http.response.status_code': 503,
      });
      expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    });

    it('names the span after the method by default, and marks a failed exchange', async () => {
      await expect(context.with(continuing('01'), () => inClientSpan('GET', 'http://example.com/', {}, () => Promise.reject(new Error('refused'))))).rejects.toThrow('refused');
      const [span] = exporter.getFinishedSpans();
      expect(span).toMatchObject({ name: 'GET', status: { code: SpanStatusCode.ERROR, message: 'refused' } });
      expect(span!.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    });

    it('leaves a span the SDK does not sample as it is: its own id, not recorded', async () => {
      const headers = await headersSentIn(continuing('00'));
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(headers.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-(?!${CALLER_SPAN_ID})[0-9a-f]{16}-00$`));
    });
  });
});
