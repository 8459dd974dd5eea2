import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { DEMO_AUTOMATION_DEFINITION, DEMO_CHATBOT_DEFINITION } from './demo-definitions.js';

export interface DemoCredentials {
  orgId: string;
  chatbotProjectId: string;
  automationProjectId: string;
  consoleJwt: string;
  chatbotToken: string;
  automationToken: string;
  firstStart: boolean;
}

interface DemoState {
  databaseKey: string;
  orgId: string;
  chatbotProjectId: string;
  automationProjectId: string;
  /** Ids of the tokens printed last time: revoked when new ones are printed. */
  tokenIds: string[];
}

const DEMO_USER = 'demo-owner';

/**
 * Creates the demo organization (a CHATBOT and an AUTOMATION project, definitions published)
 * on first start, through the console API like any client. Every start prints fresh API
 * tokens and revokes the previous ones, so the printed credentials always work and tokens do
 * not pile up. `demo.json` never holds a raw token; the launcher writes the printed ones to
 * `demo.env` (mode 0600, see demo-env.ts) for the README's first run.
 */
export async function seedDemo(options: { gatewayUrl: string; jwtSecret: string; dataDir: string; databaseKey: string }): Promise<DemoCredentials> {
  const consoleJwt = jwt.sign({ sub: DEMO_USER, roles: ['platform-admin'] }, options.jwtSecret, { algorithm: 'HS256', expiresIn: '30d' });
  const api = consoleApi(options.gatewayUrl, consoleJwt);
  const stateFile = path.join(options.dataDir, 'demo.json');
  const databaseKey = createHash('sha256').update(options.databaseKey).digest('hex').slice(0, 16);

  let state = await readState(stateFile);
  const firstStart = !state || state.databaseKey !== databaseKey;
  if (firstStart) {
    const org = await api('POST', '/v1/orgs', { name: 'Demo organization' });
    const chatbot = await api('POST', `/v1/orgs/${org.orgId}/projects`, { name: 'Demo chatbot', type: 'CHATBOT' });
    const automation = await api('POST', `/v1/orgs/${org.orgId}/projects`, { name: 'Demo automation', type: 'AUTOMATION' });
    for (const [project, definition] of [
      [chatbot, DEMO_CHATBOT_DEFINITION],
      [automation, DEMO_AUTOMATION_DEFINITION],
    ] as const) {
      await api('PUT', `/v1/orgs/${org.orgId}/projects/${project.projectId}/definition`, { definition });
      await api('POST', `/v1/orgs/${org.orgId}/projects/${project.projectId}/publish`);
    }
    state = { databaseKey, orgId: org.orgId, chatbotProjectId: chatbot.projectId, automationProjectId: automation.projectId, tokenIds: [] };
  }
  const current = state!;

  for (const [index, tokenId] of current.tokenIds.entries()) {
    const projectId = index === 0 ? current.chatbotProjectId : current.automationProjectId;
    await api('DELETE', `/v1/orgs/${current.orgId}/projects/${projectId}/api-tokens/${tokenId}`, undefined, [204, 404]);
  }
  const chatbotToken = await api('POST', `/v1/orgs/${current.orgId}/projects/${current.chatbotProjectId}/api-tokens`, {
    name: 'demo',
    scopes: ['bot:invoke', 'flow:trigger'],
  });
  const automationToken = await api('POST', `/v1/orgs/${current.orgId}/projects/${current.automationProjectId}/api-tokens`, {
    name: 'demo',
    scopes: ['automation:trigger'],
  });
  current.tokenIds = [chatbotToken.id, automationToken.id];
  await mkdir(options.dataDir, { recursive: true });
  await writeFile(stateFile, JSON.stringify(current, null, 2), { mode: 0o600 });

  return {
    orgId: current.orgId,
    chatbotProjectId: current.chatbotProjectId,
    automationProjectId: current.automationProjectId,
    consoleJwt,
    chatbotToken: chatbotToken.token,
    automationToken: automationToken.token,
    firstStart,
  };
}

async function readState(file: string): Promise<DemoState | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as DemoState;
  } catch {
    return undefined;
  }
}

type Answer = Record<string, string>;

function consoleApi(baseUrl: string, bearer: string) {
  return async (method: string, route: string, body?: unknown, accept: number[] = [200, 201]): Promise<Answer> => {
    const response = await fetch(baseUrl + route, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!accept.includes(response.status)) throw new Error(`demo setup: ${method} ${route} answered ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Answer;
  };
}
