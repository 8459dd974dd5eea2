/**
 * The console's own addresses, under /console/. They say `organizations`, never `orgs`: the
 * gateway reads any `/<segment>/orgs/…` as an API version and would refuse a reload.
 */
export const projectPath = (orgId: string, projectId: string, page = 'health') =>
  `/organizations/${encodeURIComponent(orgId)}/projects/${encodeURIComponent(projectId)}/${page}`;

export const runPath = (orgId: string, projectId: string, invocationId: string) =>
  projectPath(orgId, projectId, `runs/${encodeURIComponent(invocationId)}`);

/** The project pages, in navigation order: the path segment and the link's words. */
export const PROJECT_PAGES = [
  ['health', 'Health'],
  ['definition', 'Definition'],
  ['logs', 'Logs'],
  ['dead-letters', 'Dead letters'],
  ['polling-triggers', 'Polling triggers'],
  ['schedules', 'Schedules'],
  ['webhooks', 'Hooks and subscriptions'],
  ['api-access', 'API access'],
  ['api-settings', 'API settings'],
  ['templates', 'Templates and examples'],
] as const;
