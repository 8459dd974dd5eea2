import type { ProjectType } from '../platform/store/project.entity.js';

/**
 * The six run endpoints of the public API, by the names the console uses for them (templates,
 * the request example builder). The names are stored with templates: add, never rename.
 */
export const RUN_ENDPOINTS = ['bots.message', 'bots.invoke', 'flows.trigger', 'flows.trigger-async', 'automations.trigger', 'automations.trigger-async'] as const;
export type RunEndpoint = (typeof RUN_ENDPOINTS)[number];

export interface RunEndpointInfo {
  /** The project type the endpoint accepts (the spec answers 400 for any other). */
  projectType: ProjectType;
  /** Path below `/v1/orgs/{orgId}/`. */
  path: (projectId: string) => string;
  /** Async endpoints take webhookUrl, webhookSecret, runAt and delaySeconds. */
  async: boolean;
}

export const RUN_ENDPOINT_INFO: Readonly<Record<RunEndpoint, RunEndpointInfo>> = {
  'bots.message': { projectType: 'CHATBOT', path: (id) => `bots/${id}/message`, async: false },
  'bots.invoke': { projectType: 'CHATBOT', path: (id) => `bots/${id}/invoke`, async: true },
  'flows.trigger': { projectType: 'CHATBOT', path: (id) => `flows/${id}/trigger`, async: false },
  'flows.trigger-async': { projectType: 'CHATBOT', path: (id) => `flows/${id}/trigger-async`, async: true },
  'automations.trigger': { projectType: 'AUTOMATION', path: (id) => `automations/${id}/trigger`, async: false },
  'automations.trigger-async': { projectType: 'AUTOMATION', path: (id) => `automations/${id}/trigger-async`, async: true },
};

// Ours (the design says 400, not the words).
export const RUN_ENDPOINT_ERRORS = {
  unknown: `endpoint must be one of: ${RUN_ENDPOINTS.join(', ')}`,
  wrongType: (endpoint: RunEndpoint, projectType: ProjectType) =>
    `endpoint ${endpoint} is not available for ${projectType} projects; use one of: ${endpointsFor(projectType).join(', ')}`,
} as const;

export function isRunEndpoint(value: unknown): value is RunEndpoint {
  return typeof value === 'string' && (RUN_ENDPOINTS as readonly string[]).includes(value);
}

export function endpointsFor(projectType: ProjectType): RunEndpoint[] {
  return RUN_ENDPOINTS.filter((endpoint) => RUN_ENDPOINT_INFO[endpoint].projectType === projectType);
}

/** Why the endpoint does not suit a project of this type; null when it does. */
export function endpointMismatch(endpoint: RunEndpoint, projectType: ProjectType): string | null {
  return RUN_ENDPOINT_INFO[endpoint].projectType === projectType ? null : RUN_ENDPOINT_ERRORS.wrongType(endpoint, projectType);
}
