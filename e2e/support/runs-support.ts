import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpClient, HttpResult } from '@runline/testing';
import type { ProjectFixture } from '../gateway-fixtures.js';

/** Helpers for e2e/runs.e2e-spec.ts: run endpoints, polling, definitions and a slow local server. */

export type Json = Record<string, unknown>;

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The fields of the spec's Invocation table; GET must return every one of them. */
export const SPEC_INVOCATION_FIELDS = [
  'invocationId',
  'status',
  'environment',
  'triggerSource',
  'mode',
  'targetType',
  'startedAt',
  'completedAt',
  'durationMs',
  'errorMessage',
  'requestPayload',
  'result',
  'trace',
  'steps',
  'callbackAttempts',
  'scheduledFor',
  'schedulerStatus',
  'schedulerJobName',
  'pendingApproval',
  'createdAt',
  'updatedAt',
] as const;

export type RunEndpoint = 'botMessage' | 'botInvoke' | 'flowTrigger' | 'flowTriggerAsync' | 'automationTrigger' | 'automationTriggerAsync';

const ENDPOINT_PATHS: Record<RunEndpoint, string> = {
  botMessage: 'bots/{projectId}/message',
  botInvoke: 'bots/{projectId}/invoke',
  flowTrigger: 'flows/{projectId}/trigger',
  flowTriggerAsync: 'flows/{projectId}/trigger-async',
  automationTrigger: 'automations/{projectId}/trigger',
  automationTriggerAsync: 'automations/{projectId}/trigger-async',
};

/** The path of one of the six run endpoints for `project` (orgId overridable for the 404 rows). */
export function runPath(endpoint: RunEndpoint, project: Pick<ProjectFixture, 'orgId' | 'projectId'>): string {
  return `/v1/orgs/${project.orgId}/${ENDPOINT_PATHS[endpoint].replace('{projectId}', project.projectId)}`;
}

export function invocationPath(orgId: string, invocationId: string): string {
  return `/v1/orgs/${orgId}/external-invocations/${invocationId}`;
}

/** Reads a run until its status is final (every `intervalMs`, up to `timeoutMs`); returns the last read. */
export async function pollUntilFinal(
  http: HttpClient,
  orgId: string,
  invocationId: string,
  token: string,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<HttpResult<Json>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const read = await http.get<Json>(invocationPath(orgId, invocationId), { bearer: token });
    if (read.status !== 200 || FINAL_STATUSES.has(String(read.body.status)) || Date.now() >= deadline) return read;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

/** A chatbot definition whose flow graph is `flow` (the bot graph says hello). */
export function chatbotDefinition(flow: Json, bot?: Json): Json {
  return {
    schemaVersion: 1,
    bot: bot ?? { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } } },
    flow,
  };
}

/** An automation definition with the given workflow graph. */
export function automationDefinition(workflow: Json): Json {
  return { schemaVersion: 1, workflow };
}

/** The bot of the session tests: asks a name, then greets with it. */
export const ASK_BOT_DEFINITION = chatbotDefinition(
  { start: 'n1', nodes: { n1: { type: 'end' } } },
  {
    start: 'ask',
    nodes: {
      ask: { type: 'ask', text: 'What is your name?', saveAs: 'name', next: 'greet' },
      greet: { type: 'message', text: 'Hello {{ vars.name }}', next: 'end' },
      end: { type: 'end' },
    },
  },
);

/** A flow whose first node fails (a `set` whose expression raises), then says "after". */
export function failingSetFlow(trigger: Json = {}): Json {
  return {
    trigger: { externalEnabled: true, ...trigger },
    start: 'n1',
    nodes: {
      n1: { type: 'set', values: { x: "$error('boom')" }, next: 'n2' },
      n2: { type: 'message', text: 'after', next: 'n3' },
      n3: { type: 'end' },
    },
  };
}

export interface SlowServer {
  url: string;
  /** Requests received so far. */
  hits(): number;
  close(): Promise<void>;
}

/** A real local HTTP server that answers `{ok: true}` only after `delayMs`. */
export async function startSlowServer(delayMs: number): Promise<SlowServer> {
  let hits = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((_request, response) => {
    hits += 1;
    const timer = setTimeout(() => {
      timers.delete(timer);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/slow`,
    hits: () => hits,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
