import { lazy, Suspense } from 'react';
import { useParams } from 'react-router';
import { useResource } from '../../api/use-api.js';
import { useProject } from '../../api/use-project.js';
import { Loading } from '../../components/loading.js';

// The page itself (CodeMirror, React Flow, dagre) loads when first opened, not with the console.
const DefinitionPage = lazy(() => import('./definition-page.js').then((module) => ({ default: module.DefinitionPage })));

/** What the definition page reads: started here, beside the download of the page's code, not after it. */
function useDefinitionReads(orgId: string, projectId: string) {
  const project = useProject(orgId, projectId);
  const schema = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition/schema', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const draft = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: { orgId, projectId }, query: { stage: 'draft' } } }), [orgId, projectId]);
  const published = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: { orgId, projectId }, query: { stage: 'published' } } }), [orgId, projectId]);
  return { project, schema, draft, published };
}

export type DefinitionReads = ReturnType<typeof useDefinitionReads>;

/** `/console/organizations/:orgId/projects/:projectId/definition`. */
export function DefinitionRoute() {
  const { orgId = '', projectId = '' } = useParams();
  const reads = useDefinitionReads(orgId, projectId);
  return (
    <Suspense fallback={<Loading what="the definition page" />}>
      <DefinitionPage orgId={orgId} projectId={projectId} reads={reads} />
    </Suspense>
  );
}
