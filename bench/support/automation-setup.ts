import { consoleApi } from './console-api.js';

/** The automation the scheduling benchmark schedules runs of, and the token that may. */
export interface AutomationTrigger {
  orgId: string;
  projectId: string;
  /** `rl_ext_…`, scope automation:trigger. */
  token: string;
  /** `/v1/orgs/{orgId}/automations/{projectId}/trigger-async` */
  asyncPath: string;
}

/**
 * The least a run can do: one `return` node. What is measured is when a run starts, so the
 * run itself should cost as little as possible.
 */
const TRIVIAL_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'done',
    nodes: { done: { type: 'return', value: "{ 'n': payload.n }" } },
  },
};

/**
 * Sets up what a customer would have, through the console API like any client: an
 * organization, an automation project with a published trivial workflow, its external API on
 * with every run enrolled (EVERY_MATCH: no enrollment check skips a run) and the highest rate
 * limit the API allows, and an API token with scope automation:trigger.
 */
export async function setUpAutomationTrigger(gatewayUrl: string, consoleJwtSecret: string): Promise<AutomationTrigger> {
  const api = consoleApi(gatewayUrl, consoleJwtSecret);
  const call = (method: string, path: string, expected: number, body?: unknown) => api(method, path, body, expected);
  const org = await call('POST', '/v1/orgs', 201, { name: 'Scheduling benchmark organization' });
  const orgId = String(org.orgId);
  const project = await call('POST', `/v1/orgs/${orgId}/projects`, 201, { name: 'Scheduling benchmark automation', type: 'AUTOMATION' });
  const projectId = String(project.projectId);
  const projectPath = `/v1/orgs/${orgId}/projects/${projectId}`;
  await call('PUT', `${projectPath}/definition`, 200, { definition: TRIVIAL_AUTOMATION });
  await call('POST', `${projectPath}/publish`, 200);
  await call('PATCH', `${projectPath}/api-settings`, 200, {
    externalApiEnabled: true,
    defaultEnrollmentPolicy: 'EVERY_MATCH',
    rateLimitPerMinute: 1_000_000,
  });
  const issued = await call('POST', `${projectPath}/api-tokens`, 201, { name: 'scheduling benchmark', scopes: ['automation:trigger'] });
  return { orgId, projectId, token: String(issued.token), asyncPath: `/v1/orgs/${orgId}/automations/${projectId}/trigger-async` };
}
