import { useResource } from './use-api.js';

/** The project the page is about (name, type, versions). */
export function useProject(orgId: string, projectId: string) {
  return useResource(
    (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}', { params: { path: { orgId, projectId } } }),
    [orgId, projectId],
  );
}
