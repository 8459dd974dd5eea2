import { lazy, Suspense } from 'react';
import { useParams } from 'react-router';
import { Loading } from '../../components/loading.js';
import { useDefinitionReads } from './use-definition-reads.js';

// The page itself (CodeMirror, React Flow, dagre) loads when first opened, not with the console.
const DefinitionPage = lazy(() => import('./definition-page.js').then((module) => ({ default: module.DefinitionPage })));

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
