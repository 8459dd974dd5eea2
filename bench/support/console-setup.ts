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

/** DESIGN.md section 4's chatbot example: the flow trigger is enabled. */
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
 * Sets up what a customer would have, through the console API like any client: an
 * organization, a chatbot project with a published definition and the external API on, and an
 * API token with scope flow:trigger.
 */
export async function setUpFlowTrigger(gatewayUrl: string, consoleJwtSecret: string): Promise<FlowTrigger> {
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
  await call('PUT', `/v1/orgs/${orgId}/projects/${projectId}/definition`, 200, { definition: CHATBOT_DEFINITION });
  await call('POST', `/v1/orgs/${orgId}/projects/${projectId}/publish`, 200);
  // The highest limit the API allows: once rate limiting exists it stays on the measured path
  // without refusing the benchmark's calls.
  await call('PATCH', `/v1/orgs/${orgId}/projects/${projectId}/api-settings`, 200, { rateLimitPerMinute: 1_000_000 });
  const issued = await call('POST', `/v1/orgs/${orgId}/projects/${projectId}/api-tokens`, 201, { name: 'benchmark', scopes: ['flow:trigger'] });
  return { orgId, projectId, token: String(issued.token), path: `/v1/orgs/${orgId}/flows/${projectId}/trigger` };
}

/**
 * Proves the route runs the whole pipeline before load is put on it: no token is refused
 * (401), a bad body is refused after the token checks (400), and a good call gets through
 * every check to `expectedStatus`. A benchmark of 401s would measure nothing.
 */
export async function checkPipeline(gatewayUrl: string, trigger: FlowTrigger, body: string, expectedStatus: number): Promise<string> {
  const url = gatewayUrl + trigger.path;
  const json = { 'content-type': 'application/json' };
  const authorized = { ...json, authorization: `Bearer ${trigger.token}` };
  const probes = [
    { what: 'no token', headers: json, body, expected: 401 },
    { what: 'invalid body (customerId not a string)', headers: authorized, body: JSON.stringify({ event: 'order.created', customerId: 5 }), expected: 400 },
    { what: 'valid call', headers: authorized, body, expected: expectedStatus },
  ];
  const lines: string[] = [];
  for (const probe of probes) {
    const response = await send(url, 'POST', probe.headers, probe.body);
    const line = `${probe.what} -> ${response.status} ${response.text}`;
    if (response.status !== probe.expected) throw new Error(`pipeline check failed: ${line} (expected ${probe.expected})`);
    lines.push(line);
  }
  return lines.join('\n');
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
