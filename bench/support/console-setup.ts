import jwt from 'jsonwebtoken';

/** The external route under test and the credentials to call it. */
export interface FlowTrigger {
  orgId: string;
  projectId: string;
  /** `rl_ext_…`, scope flow:trigger. */
  token: string;
  /** `/v1/orgs/{orgId}/flows/{projectId}/trigger` */
  path: string;
}

/** The documented chatbot example definition: the flow trigger is enabled. */
const CHATBOT_DEFINITION = {
  schemaVersion: 1,
  bot: {
    start: 'hello',
    nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } },
  },
  flow: {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'n1',
    nodes: { n1: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'n2' }, n2: { type: 'end' } },
  },
};

/**
 * Flow control that never binds at the benchmark's rates (issue 32's no-binding cost): every
 * kind that holds state per key (concurrency, throttle) and the project's `maxConcurrentRuns`,
 * each far above what the load reaches, on the key every benchmark call shares. The starts
 * still go through the flow-controlled path: the slots, the throttle's state and the checks.
 */
const UNBINDING_FLOW_CONTROL = {
  concurrency: [{ limit: 100_000, key: 'payload.customerId' }],
  throttle: { limit: 100_000, periodSeconds: 1, key: 'payload.customerId' },
};
const UNBINDING_MAX_CONCURRENT_RUNS = 100_000;

/**
 * Sets up what a customer would have, through the console API like any client: an
 * organization, a chatbot project with a published definition and the external API on, and an
 * API token with scope flow:trigger. With `flowControl`, the flow trigger and the project carry
 * UNBINDING_FLOW_CONTROL.
 */
export async function setUpFlowTrigger(gatewayUrl: string, consoleJwtSecret: string, { flowControl = false } = {}): Promise<FlowTrigger> {
  const consoleJwt = jwt.sign({ sub: 'bench-owner', roles: [] }, consoleJwtSecret, { algorithm: 'HS256', expiresIn: 3600 });
  const call = async (method: string, path: string, expected: number, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await send(gatewayUrl + path, method, { authorization: `Bearer ${consoleJwt}` }, body);
    if (response.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${response.text}`);
    return response.text ? (JSON.parse(response.text) as Record<string, unknown>) : {};
  };
  const org = await call('POST', '/v1/orgs', 201, { name: 'Benchmark organization' });
  const orgId = String(org.orgId);
  const project = await call('POST', `/v1/orgs/${orgId}/projects`, 201, { name: 'Benchmark chatbot', type: 'CHATBOT' });
  const projectId = String(project.projectId);
  const definition = flowControl ? { ...CHATBOT_DEFINITION, flow: { ...CHATBOT_DEFINITION.flow, trigger: { ...CHATBOT_DEFINITION.flow.trigger, flowControl: UNBINDING_FLOW_CONTROL } } } : CHATBOT_DEFINITION;
  await call('PUT', `/v1/orgs/${orgId}/projects/${projectId}/definition`, 200, { definition });
  await call('POST', `/v1/orgs/${orgId}/projects/${projectId}/publish`, 200);
  // The highest limit the API allows: once rate limiting exists it stays on the measured path
  // without refusing the benchmark's calls.
  await call('PATCH', `/v1/orgs/${orgId}/projects/${projectId}/api-settings`, 200, {
    rateLimitPerMinute: 1_000_000,
    ...(flowControl ? { maxConcurrentRuns: UNBINDING_MAX_CONCURRENT_RUNS } : {}),
  });
  const issued = await call('POST', `/v1/orgs/${orgId}/projects/${projectId}/api-tokens`, 201, { name: 'benchmark', scopes: ['flow:trigger'] });
  return { orgId, projectId, token: String(issued.token), path: `/v1/orgs/${orgId}/flows/${projectId}/trigger` };
}

/** A call made before the load starts, and the answer it must get. */
export interface Probe {
  what: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  expectedStatus: number;
  /** What is wrong with the answer's JSON body, or undefined when it is right. */
  checkBody?: (body: unknown) => string | undefined;
}

/**
 * Makes each call once and fails on the first answer that is not the expected one, so a
 * benchmark never puts load on a route that answers something else (a benchmark of 401s
 * measures nothing). Returns one line per call for the report.
 */
export async function checkAnswers(probes: Probe[]): Promise<string> {
  const lines: string[] = [];
  for (const probe of probes) {
    const response = await send(probe.url, 'POST', probe.headers, probe.body);
    const line = `${probe.what} -> ${response.status} ${response.text}`;
    if (response.status !== probe.expectedStatus) throw new Error(`check failed: ${line} (expected ${probe.expectedStatus})`);
    const problem = probe.checkBody?.(parseJson(response.text));
    if (problem !== undefined) throw new Error(`check failed: ${line} (${problem})`);
    lines.push(line);
  }
  return lines.join('\n');
}

/** The headers of a JSON call with the trigger's token. */
export function authorizedJson(trigger: FlowTrigger): Record<string, string> {
  return { 'content-type': 'application/json', authorization: `Bearer ${trigger.token}` };
}

/**
 * Proves the route runs the whole pipeline: no token is refused (401), a bad body is refused
 * after the token checks (400), and a good call gets through every check to `valid`.
 */
export function pipelineProbes(url: string, trigger: FlowTrigger, body: string, valid: Pick<Probe, 'expectedStatus' | 'checkBody'>): Probe[] {
  return [
    { what: 'no token', url, headers: { 'content-type': 'application/json' }, body, expectedStatus: 401 },
    {
      what: 'invalid body (customerId not a string)',
      url,
      headers: authorizedJson(trigger),
      body: JSON.stringify({ event: 'order.created', customerId: 5 }),
      expectedStatus: 400,
    },
    { what: 'valid call', url, headers: authorizedJson(trigger), body, ...valid },
  ];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function send(url: string, method: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method,
    headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  return { status: response.status, text: await response.text() };
}
