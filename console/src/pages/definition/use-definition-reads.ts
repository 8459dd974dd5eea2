import { useResource } from '../../api/use-api.js';
import { useProject } from '../../api/use-project.js';

/** What the definition page reads: started here, beside the download of the page's code, not after it. */
export function useDefinitionReads(orgId: string, projectId: string) {
  const project = useProject(orgId, projectId);
  const schema = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition/schema', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const draft = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: { orgId, projectId }, query: { stage: 'draft' } } }), [orgId, projectId]);
  const published = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: { orgId, projectId }, query: { stage: 'published' } } }), [orgId, projectId]);
  return { project, schema, draft, published };
}

export type DefinitionReads = ReturnType<typeof useDefinitionReads>;
