import { Agent, request } from 'node:http';
import { consoleApi } from './console-api.js';

/** One project of the fairness benchmark: its async automation trigger and the token that may call it. */
export interface FairnessProject {
  name: string;
  orgId: string;
  projectId: string;
  /** `rl_ext_…`, scope automation:trigger. */
  token: string;
  /** `/v1/orgs/{orgId}/automations/{projectId}/trigger-async` */
  asyncPath: string;
}

/**
 * An automation whose run calls out once (an http node to the benchmark's receiver, which
 * answers after the work time) and returns: not self-contained, so every run is queued and
 * holds a run slot while it waits on the outside world, like the chatbot and automation runs
 * that call rate-limited APIs.
 */
function callingAutomation(receiverUrl: string, name: string) {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'POST', url: `${receiverUrl}/work/${name}`, next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
}

/**
 * Sets up, through the console API like any client, one organization per project (each its own
 * tenant), each with an automation project whose published workflow calls the receiver, its
 * external API on with every run enrolled and the highest rate limit the API allows, and a token.
 */
export async function setUpFairnessProjects(gatewayUrl: string, consoleJwtSecret: string, receiverUrl: string, names: readonly string[]): Promise<FairnessProject[]> {
  const api = consoleApi(gatewayUrl, consoleJwtSecret);
  const call = (method: string, path: string, expected: number, body?: unknown) => api(method, path, body, expected);
  const projects: FairnessProject[] = [];
  for (const name of names) {
    const org = await call('POST', '/v1/orgs', 201, { name: `Fairness benchmark ${name}` });
    const orgId = String(org.orgId);
    const project = await call('POST', `/v1/orgs/${orgId}/projects`, 201, { name: `Project ${name}`, type: 'AUTOMATION' });
    const projectId = String(project.projectId);
    const projectPath = `/v1/orgs/${orgId}/projects/${projectId}`;
    await call('PUT', `${projectPath}/definition`, 200, { definition: callingAutomation(receiverUrl, name) });
    await call('POST', `${projectPath}/publish`, 200);
    await call('PATCH', `${projectPath}/api-settings`, 200, { externalApiEnabled: true, defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 1_000_000 });
    const issued = await call('POST', `${projectPath}/api-tokens`, 201, { name: 'fairness benchmark', scopes: ['automation:trigger'] });
    projects.push({ name, orgId, projectId, token: String(issued.token), asyncPath: `/v1/orgs/${orgId}/automations/${projectId}/trigger-async` });
  }
  return projects;
}

/** Sends async triggers over kept-alive connections; each answer must be 202. */
export class TriggerSender {
  private readonly agent: Agent;

  constructor(
    private readonly gatewayUrl: string,
    connections: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  /** One run of `project`: its invocation id, how long the 202 took (ms) and when it came (epoch ms). */
  trigger(project: FairnessProject, n: number): Promise<{ invocationId: string; acceptMs: number; answeredAt: number }> {
    const body = JSON.stringify({ payload: { n } });
    const url = new URL(project.asyncPath, this.gatewayUrl);
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const call = request(
        url,
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${project.token}` } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            if (response.statusCode !== 202) reject(new Error(`trigger-async of ${project.name}: ${response.statusCode} ${text}`));
            else resolve({ invocationId: String((JSON.parse(text) as { invocationId: string }).invocationId), acceptMs: performance.now() - started, answeredAt: Date.now() });
          });
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  }

  /** `count` runs of `project`, `connections` at a time. */
  async burst(project: FairnessProject, count: number, connections: number): Promise<string[]> {
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < count) {
          const n = next++;
          ids.push((await this.trigger(project, n)).invocationId);
        }
      }),
    );
    return ids;
  }

  close(): void {
    this.agent.destroy();
  }
}
