import type { DynamicModule, Type } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { callbackService } from '@runline/callback-service';
import {
  CALLBACK_COMMAND_SUBJECTS,
  INVOCATION_COMMAND_SUBJECTS,
  INVOCATION_REQUEST_SUBJECTS,
  SCHEDULER_COMMAND_SUBJECTS,
  SCHEDULER_EVENT_SUBJECTS,
} from '@runline/contracts';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { SERVICE_ATTRIBUTE, startTracing, type Tracing } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { pollingService } from '@runline/polling-service';
import type { ServiceDefinition } from '@runline/runtime';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './support/https-receiver.js';
import { eventually, startLocalServer, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';
import { PollingEndpoint, reportingChatbot } from './support/polling-endpoint.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
/** Any W3C traceparent, sampled or not (without an exporter a trace we start ourselves is not sampled). */
const ANY_TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
/** What a customer's own tracing would send: trace and span ids the system has never seen. */
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

const parseTraceparent = (value: unknown): { traceId: string; spanId: string } => {
  const match = TRACEPARENT.exec(String(value));
  if (!match) throw new Error(`not a sampled W3C traceparent: ${String(value)}`);
  return { traceId: match[1]!, spanId: match[2]! };
};
const parseAnyTraceparent = (value: unknown): { traceId: string; spanId: string; flags: string } => {
  const match = ANY_TRACEPARENT.exec(String(value));
  if (!match) throw new Error(`not a W3C traceparent: ${String(value)}`);
  return { traceId: match[1]!, spanId: match[2]!, flags: String(value).slice(-2) };
};
/** The attributes every outbound request's span has: the server (never the path) and the answer. */
const clientAttributes = (method: string, status: number) => ({
  'http.request.method': method,
  'server.address': '127.0.0.1',
  'http.response.status_code': status,
});

/**
 * The callback service in this process (so its spans reach the in-memory exporter), with an
 * outbound guard that trusts the receiver's self-signed certificate; in production that guard
 * uses the system's certificate authorities.
 */
function callbackTrusting(certificate: TestCertificate): ServiceDefinition {
  const guard = new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'], ca: certificate.cert });
  const module: DynamicModule = { module: callbackService.module as Type<unknown>, providers: [{ provide: OutboundGuard, useValue: guard }] };
  return { ...callbackService, module };
}

/** What each block's tests talk to; filled as it starts, so a start that fails half way is still stopped. */
interface TracedSystem {
  tracing: Tracing;
  certificate: TestCertificate;
  receiver: HttpsReceiver;
  nodeTarget: LocalServer;
  pollEndpoint: PollingEndpoint;
  system: TestSystem;
  http: HttpClient;
  automation: ProjectFixture;
  automationToken: string;
}

/**
 * The gateway, invocation, callback, polling and scheduler services on `bus` under `tracing`,
 * a callback receiver, a target for http nodes (each request's `traceparent` pushed to
 * `nodeTraceparents`), a polling endpoint, and a published automation whose graph `graphOf`
 * makes from the target's URL.
 */
async function startTracedSystem(
  parts: Partial<TracedSystem>,
  bus: 'jetstream' | 'in-process',
  tracing: () => Tracing,
  nodeTraceparents: string[],
  graphOf: (targetUrl: string) => { start: string; nodes: Record<string, object> },
): Promise<TracedSystem> {
  parts.tracing = tracing();
  parts.certificate = await selfSignedCertificate();
  parts.receiver = await startHttpsReceiver(parts.certificate);
  parts.nodeTarget = await startLocalServer((_call, request) => {
    nodeTraceparents.push(String(request.headers.traceparent));
    return { status: 200, body: { ok: true } };
  });
  parts.pollEndpoint = await PollingEndpoint.start();
  parts.system = await startTestSystem([gatewayService, invocationService, callbackTrusting(parts.certificate), pollingService, schedulerService], {
    bus,
    environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' },
  });
  parts.http = new HttpClient(parts.system.url('gateway'));
  parts.automation = await createPublishedProject(parts.http, 'AUTOMATION', {
    schemaVersion: 1,
    workflow: { trigger: { externalEnabled: true, key: 'external_event' }, ...graphOf(parts.nodeTarget.url) },
  });
  parts.automationToken = (await issueToken(parts.http, parts.automation, ['automation:trigger'])).token;
  return parts as TracedSystem;
}

async function stopTracedSystem(parts: Partial<TracedSystem>): Promise<void> {
  await parts.system?.stop();
  // Unregisters the global provider, so no other test file in this worker inherits it.
  await parts.tracing?.shutdown();
  await parts.receiver?.close();
  await parts.nodeTarget?.close();
  await parts.pollEndpoint?.close();
  await parts.certificate?.remove();
}

describe.each(['jetstream', 'in-process'] as const)('one trace from the HTTP request to the callback receiver (%s bus)', (bus) => {
  const exporter = new InMemorySpanExporter();
  const parts: Partial<TracedSystem> = {};
  let http: HttpClient;
  let receiver: HttpsReceiver;
  let pollEndpoint: PollingEndpoint;
  /** The `traceparent` each request to the http node's target carried, in arrival order. */
  const nodeTraceparents: string[] = [];
  let automation: ProjectFixture;
  let automationToken: string;

  const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
  const serviceOf = (span: ReadableSpan) => span.attributes[SERVICE_ATTRIBUTE];
  /** `span` and its ancestors among `spans`, the root first. */
  const ancestry = (span: ReadableSpan, spans: ReadableSpan[]): ReadableSpan[] => {
    const byId = new Map(spans.map((each) => [each.spanContext().spanId, each]));
    const chain = [span];
    for (let parent = byId.get(span.parentSpanContext?.spanId ?? ''); parent; parent = byId.get(parent.parentSpanContext?.spanId ?? '')) chain.unshift(parent);
    return chain;
  };
  /** Every span of the trace has its parent in the trace, but the root, whose parent is `rootParent` (none: a new trace). */
  const orphansOf = (spans: ReadableSpan[], rootParent: string | undefined) => {
    const ids = new Set(spans.map((span) => span.spanContext().spanId));
    return spans.filter((span) => {
      const parent = span.parentSpanContext?.spanId;
      return parent === undefined ? rootParent !== undefined : parent !== rootParent && !ids.has(parent);
    });
  };

  beforeAll(async () => {
    ({ http, receiver, pollEndpoint, automation, automationToken } = await startTracedSystem(parts, bus, () => startTracing({ serviceName: 'runline-e2e', exporter }), nodeTraceparents, (target) => ({
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'POST', url: `${target}/orders`, body: "{ 'orderId': payload.orderId }", saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    })));
  }, 60_000);

  afterAll(() => stopTracedSystem(parts));

  it('continues the caller traceparent through the gateway, the invocation service and the callback service to the receiver', async () => {
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger-async`,
      { payload: { orderId: 'o-1' }, webhookUrl: `${receiver.url}/traced`, webhookSecret: 'whs-trace' },
      { bearer: automationToken, headers: { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` } },
    );
    expect(answer.status).toBe(202);

    const [callback] = await eventually('the callback', async () => (receiver.at('/traced').length > 0 ? receiver.at('/traced') : undefined), 20_000);
    const atReceiver = parseTraceparent(callback!.headers.traceparent);
    expect(atReceiver.traceId).toBe(CALLER_TRACE_ID);
    // The http node's request is in the same trace.
    expect(nodeTraceparents.map((value) => parseTraceparent(value).traceId)).toEqual([CALLER_TRACE_ID]);

    // Spans are exported as they end; the last ones end just after the receiver answered.
    const spans = await eventually('every span of the trace, linked', async () => {
      const found = spansOf(CALLER_TRACE_ID);
      const last = found.find((span) => span.spanContext().spanId === atReceiver.spanId);
      return last && orphansOf(found, CALLER_SPAN_ID).length === 0 ? found : undefined;
    });
    const receiverFacing = spans.find((span) => span.spanContext().spanId === atReceiver.spanId)!;
    const chain = ancestry(receiverFacing, spans).map((span) => [serviceOf(span), span.name, span.kind]);
    expect(chain).toEqual([
      ['gateway', 'POST /v1/orgs/:orgId/automations/:projectId/trigger-async', SpanKind.SERVER],
      ['invocation', `${INVOCATION_REQUEST_SUBJECTS.START_INVOCATION} process`, SpanKind.SERVER],
      ['invocation', `${INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION} process`, SpanKind.CONSUMER],
      ['invocation', 'run', SpanKind.INTERNAL],
      ['callback', `${CALLBACK_COMMAND_SUBJECTS.DELIVER_CALLBACK} process`, SpanKind.CONSUMER],
      ['callback', 'callback attempt', SpanKind.INTERNAL],
      ['callback', 'callback POST', SpanKind.CLIENT],
    ]);
    // The gateway's span is the child of the caller's.
    expect(ancestry(receiverFacing, spans)[0]!.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    // The callback's POST is a span of its own, child of the attempt's, and the receiver's traceparent names it.
    const attemptSpan = ancestry(receiverFacing, spans).at(-2)!;
    expect(atReceiver.spanId).not.toBe(attemptSpan.spanContext().spanId);
    expect(receiverFacing.parentSpanContext?.spanId).toBe(attemptSpan.spanContext().spanId);
    expect(receiverFacing.attributes).toMatchObject(clientAttributes('POST', 200));
    // The http node's request is a client span of the run, and its traceparent names it.
    const atNode = parseTraceparent(nodeTraceparents[0]);
    const nodeSpan = spans.find((span) => span.spanContext().spanId === atNode.spanId)!;
    expect(nodeSpan).toBeDefined();
    expect(ancestry(nodeSpan, spans).map((span) => [serviceOf(span), span.name, span.kind])).toEqual([
      ['gateway', 'POST /v1/orgs/:orgId/automations/:projectId/trigger-async', SpanKind.SERVER],
      ['invocation', `${INVOCATION_REQUEST_SUBJECTS.START_INVOCATION} process`, SpanKind.SERVER],
      ['invocation', `${INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION} process`, SpanKind.CONSUMER],
      ['invocation', 'run', SpanKind.INTERNAL],
      ['invocation', 'http node call', SpanKind.CLIENT],
    ]);
    const runSpan = ancestry(nodeSpan, spans).at(-2)!;
    expect(nodeSpan.parentSpanContext?.spanId).toBe(runSpan.spanContext().spanId);
    expect([CALLER_SPAN_ID, runSpan.spanContext().spanId]).not.toContain(atNode.spanId);
    expect(nodeSpan.attributes).toMatchObject({ ...clientAttributes('POST', 200), 'runline.node_id': 'call' });
  });

  it('runs a scheduled run in the trace of the request that scheduled it (the job carries it)', async () => {
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const before = nodeTraceparents.length;
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger-async`,
      { payload: { orderId: 'o-later' }, delaySeconds: 1 },
      { bearer: automationToken, headers: { traceparent: `00-${traceId}-${CALLER_SPAN_ID}-01` } },
    );
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('SCHEDULED');
    await eventually('the scheduled run', async () => (nodeTraceparents.length > before ? true : undefined), 15_000);
    const atNode = parseTraceparent(nodeTraceparents[before]);
    expect(atNode.traceId).toBe(traceId);

    const spans = await eventually('the scheduled trace, linked', async () => {
      const found = spansOf(traceId);
      return found.some((span) => span.spanContext().spanId === atNode.spanId) && orphansOf(found, CALLER_SPAN_ID).length === 0 ? found : undefined;
    });
    const nodeSpan = spans.find((span) => span.spanContext().spanId === atNode.spanId)!;
    expect(ancestry(nodeSpan, spans).map((span) => [serviceOf(span), span.name])).toEqual([
      ['gateway', 'POST /v1/orgs/:orgId/automations/:projectId/trigger-async'],
      ['invocation', `${INVOCATION_REQUEST_SUBJECTS.START_INVOCATION} process`],
      ['scheduler', `${SCHEDULER_COMMAND_SUBJECTS.SCHEDULE_JOB} process`],
      ['invocation', `${SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_FIRED} process`],
      ['invocation', 'run'],
      ['invocation', 'http node call'],
    ]);
  });

  it('starts a new trace for a request without traceparent', async () => {
    const before = nodeTraceparents.length;
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger`,
      { payload: { orderId: 'o-2' } },
      { bearer: automationToken },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('SUCCEEDED');
    const { traceId } = parseTraceparent(nodeTraceparents[before]);
    expect(traceId).not.toBe(CALLER_TRACE_ID);

    const spans = await eventually('the new trace, linked', async () => {
      const found = spansOf(traceId);
      return found.some((span) => span.kind === SpanKind.SERVER && serviceOf(span) === 'gateway') && orphansOf(found, undefined).length === 0 ? found : undefined;
    });
    const roots = spans.filter((span) => span.parentSpanContext === undefined);
    expect(roots.map((span) => [serviceOf(span), span.name])).toEqual([['gateway', 'POST /v1/orgs/:orgId/automations/:projectId/trigger']]);
  });

  it('sends a traceparent on each poll, and the runs of the polled items belong to that trace', async () => {
    const chatbot = await createPublishedProject(http, 'CHATBOT', reportingChatbot(pollEndpoint.url));
    const token = (await issueToken(http, chatbot, ['flow:trigger'])).token;
    const url = pollEndpoint.script('/api/traced', [{ json: [{ id: 1, event: 'order.created', customerId: 'c-1' }] }, { json: [] }]);
    const created = await http.post(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`, { source: 'crm', pollKey: 'traced', pollEndpoint: url }, { bearer: token });
    expect(created.status).toBe(201);

    const [poll] = await eventually('the first poll', async () => (pollEndpoint.callsTo('/api/traced').length > 0 ? pollEndpoint.callsTo('/api/traced') : undefined));
    const [seen] = await eventually("the polled item's run", async () => (pollEndpoint.callsTo('/seen/traced').length > 0 ? pollEndpoint.callsTo('/seen/traced') : undefined));
    const polled = parseTraceparent(poll!.headers.traceparent);
    expect(parseTraceparent(seen!.headers.traceparent).traceId).toBe(polled.traceId);

    const spans = await eventually('the poll trace, linked', async () => {
      const found = spansOf(polled.traceId);
      return found.some((span) => span.name === 'poll') && orphansOf(found, undefined).length === 0 ? found : undefined;
    });
    const pollGet = spans.find((span) => span.spanContext().spanId === polled.spanId)!;
    expect(pollGet).toBeDefined();
    expect(ancestry(pollGet, spans).map((span) => [serviceOf(span), span.name, span.kind])).toEqual([
      ['polling', 'poll', SpanKind.INTERNAL],
      ['polling', 'poll GET', SpanKind.CLIENT],
    ]);
    const pollSpan = ancestry(pollGet, spans)[0]!;
    expect(polled.spanId).not.toBe(pollSpan.spanContext().spanId);
    expect(pollGet.attributes).toMatchObject(clientAttributes('GET', 200));
    // The polled item's run sends its http node's request in a span of its own, under that run's span.
    const seenAt = parseTraceparent(seen!.headers.traceparent);
    const reportChain = await eventually("the item run's request span, linked to the poll", async () => {
      const found = spansOf(polled.traceId);
      const reportSpan = found.find((span) => span.spanContext().spanId === seenAt.spanId);
      const chain = reportSpan && ancestry(reportSpan, found);
      return chain?.[0]!.spanContext().spanId === pollSpan.spanContext().spanId ? chain : undefined;
    });
    const reportSpan = reportChain.at(-1)!;
    expect(reportChain.slice(-2).map((span) => [serviceOf(span), span.name, span.kind])).toEqual([
      ['invocation', 'run', SpanKind.INTERNAL],
      ['invocation', 'http node report', SpanKind.CLIENT],
    ]);
    expect(reportSpan.attributes).toMatchObject({ ...clientAttributes('POST', 200), 'runline.node_id': 'report' });
  });
});

/**
 * Without an exporter (the default: no `OTEL_EXPORTER_OTLP_ENDPOINT`) nothing is recorded, but
 * every outbound request still names a span of its own in its `traceparent` (W3C: a new span id
 * for each request), in the trace of the run, the poll or the callback it belongs to: never the
 * caller's span id, and never the same id for two requests.
 */
describe.each(['jetstream', 'in-process'] as const)('each outbound request names a span of its own, without an exporter (%s bus)', (bus) => {
  const parts: Partial<TracedSystem> = {};
  let http: HttpClient;
  let receiver: HttpsReceiver;
  let pollEndpoint: PollingEndpoint;
  const nodeTraceparents: string[] = [];
  let automation: ProjectFixture;
  let automationToken: string;

  beforeAll(async () => {
    const tracing = () => startTracing({ serviceName: 'runline-e2e', environment: {} });
    ({ http, receiver, pollEndpoint, automation, automationToken } = await startTracedSystem(parts, bus, tracing, nodeTraceparents, (target) => ({
      start: 'first',
      nodes: {
        first: { type: 'http', method: 'POST', url: `${target}/orders`, body: "{ 'orderId': payload.orderId }", next: 'second' },
        second: { type: 'http', method: 'GET', url: `${target}/orders/again`, next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    })));
    expect(parts.tracing!.exporting).toBe(false);
  }, 60_000);

  afterAll(() => stopTracedSystem(parts));

  it("sends the caller's trace on from each http node request and the callback, each under a new span id", async () => {
    const before = nodeTraceparents.length;
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger-async`,
      { payload: { orderId: 'o-1' }, webhookUrl: `${receiver.url}/untraced`, webhookSecret: 'whs-trace' },
      { bearer: automationToken, headers: { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` } },
    );
    expect(answer.status).toBe(202);
    const [callback] = await eventually('the callback', async () => (receiver.at('/untraced').length > 0 ? receiver.at('/untraced') : undefined), 20_000);
    const sent = [...nodeTraceparents.slice(before), String(callback!.headers.traceparent)].map(parseAnyTraceparent);
    expect(sent).toHaveLength(3);
    for (const header of sent) {
      // The run's trace (the caller's), its sampled flag passed on as it came.
      expect(header).toMatchObject({ traceId: CALLER_TRACE_ID, flags: '01' });
      // Not the caller's span (which is all the unrecorded run's span context carries): a new one.
      expect(header.spanId).not.toBe(CALLER_SPAN_ID);
    }
    // Two requests of one run and its callback: three spans.
    expect(new Set(sent.map((header) => header.spanId)).size).toBe(3);
  });

  it('gives a sync run without traceparent a trace of its own, and its request a span of its own', async () => {
    const before = nodeTraceparents.length;
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger`,
      { payload: { orderId: 'o-2' } },
      { bearer: automationToken },
    );
    expect(answer.status).toBe(200);
    const [first, second] = nodeTraceparents.slice(before).map(parseAnyTraceparent);
    expect(first!.traceId).not.toBe(CALLER_TRACE_ID);
    expect(second!.traceId).toBe(first!.traceId);
    expect(second!.spanId).not.toBe(first!.spanId);
  });

  it("sends each poll's GET and the polled item's run's request under spans of their own, in the poll's trace", async () => {
    const chatbot = await createPublishedProject(http, 'CHATBOT', reportingChatbot(pollEndpoint.url));
    const token = (await issueToken(http, chatbot, ['flow:trigger'])).token;
    const url = pollEndpoint.script('/api/untraced', [{ json: [{ id: 1, event: 'order.created', customerId: 'c-1' }] }, { json: [] }]);
    const created = await http.post(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`, { source: 'crm', pollKey: 'untraced', pollEndpoint: url }, { bearer: token });
    expect(created.status).toBe(201);

    const [poll] = await eventually('the first poll', async () => (pollEndpoint.callsTo('/api/untraced').length > 0 ? pollEndpoint.callsTo('/api/untraced') : undefined));
    const [seen] = await eventually("the polled item's run", async () => (pollEndpoint.callsTo('/seen/untraced').length > 0 ? pollEndpoint.callsTo('/seen/untraced') : undefined));
    const polled = parseAnyTraceparent(poll!.headers.traceparent);
    const reported = parseAnyTraceparent(seen!.headers.traceparent);
    expect(reported.traceId).toBe(polled.traceId);
    // The GET is the poll's request, the report the run's: two spans (both children of spans nobody recorded).
    expect(reported.spanId).not.toBe(polled.spanId);
  });
});
