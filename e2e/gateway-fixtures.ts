import { consoleJwt, HttpClient } from '@runline/testing';

export interface ProjectFixture {
  orgId: string;
  projectId: string;
  ownerJwt: string;
}

let counter = 0;

/** A fresh organization owned by a fresh user, with one project of the given type. */
export async function createProject(http: HttpClient, type: 'CHATBOT' | 'AUTOMATION'): Promise<ProjectFixture> {
  const ownerJwt = consoleJwt(`owner-${process.pid}-${++counter}`);
  const org = await http.post<{ orgId: string }>('/v1/orgs', { name: `Org ${counter}` }, { bearer: ownerJwt });
  if (org.status !== 201) throw new Error(`org: ${org.status} ${JSON.stringify(org.body)}`);
  const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: `Project ${counter}`, type }, { bearer: ownerJwt });
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`);
  return { orgId: org.body.orgId, projectId: project.body.projectId, ownerJwt };
}

/** Issues an API token through the console; returns the token shown once and its id. */
export async function issueToken(
  http: HttpClient,
  project: ProjectFixture,
  scopes: string[],
  extra: { expiresAt?: string } = {},
): Promise<{ id: string; token: string }> {
  const created = await http.post<{ id: string; token: string }>(
    `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-tokens`,
    { name: 'test token', scopes, ...extra },
    { bearer: project.ownerJwt },
  );
  if (created.status !== 201) throw new Error(`token: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

export const VALID_CHATBOT_DEFINITION = {
  schemaVersion: 1,
  bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } } },
  flow: {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'n1',
    nodes: { n1: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'n2' }, n2: { type: 'end' } },
  },
};

export const VALID_AUTOMATION_DEFINITION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" } },
  },
};

/** Saves `definition` as the project's draft and publishes it; returns the published version. */
export async function publishDefinition(http: HttpClient, project: ProjectFixture, definition: object): Promise<number> {
  const base = `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
  const saved = await http.put(`${base}/definition`, { definition }, { bearer: project.ownerJwt });
  if (saved.status !== 200) throw new Error(`definition: ${saved.status} ${JSON.stringify(saved.body)}`);
  const published = await http.post<{ publishedVersion: number }>(`${base}/publish`, {}, { bearer: project.ownerJwt });
  if (published.status !== 200) throw new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`);
  return published.body.publishedVersion;
}

/** A fresh project with the valid definition of its type published. */
export async function createPublishedProject(http: HttpClient, type: 'CHATBOT' | 'AUTOMATION', definition?: object): Promise<ProjectFixture> {
  const project = await createProject(http, type);
  await publishDefinition(http, project, definition ?? (type === 'CHATBOT' ? VALID_CHATBOT_DEFINITION : VALID_AUTOMATION_DEFINITION));
  return project;
}

/**
 * Sets the project's rate limit (per token and endpoint, per minute) through the console, for
 * tests that send more requests than the platform default of 120 per 60 s allows.
 */
export async function setRateLimit(http: HttpClient, project: ProjectFixture, rateLimitPerMinute: number): Promise<void> {
  const answer = await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { rateLimitPerMinute }, { bearer: project.ownerJwt });
  if (answer.status !== 200) throw new Error(`api settings: ${answer.status} ${JSON.stringify(answer.body)}`);
}
