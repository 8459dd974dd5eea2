import { lazy, Suspense } from 'react';
import { useParams } from 'react-router';
import { prefetchLayouts } from '../../components/flow-graph/layout-worker-client.js';
import { Loading } from '../../components/loading.js';
import { useDefinitionReads } from './use-definition-reads.js';

// The page itself (CodeMirror, React Flow, dagre) loads when first opened, not with the console.
const DefinitionPage = lazy(() => import('./definition-page.js').then((module) => ({ default: module.DefinitionPage })));

/** `/console/organizations/:orgId/projects/:projectId/definition`. */
export function DefinitionRoute() {
  const { orgId = '', projectId = '' } = useParams();
  const reads = useDefinitionReads(orgId, projectId);
  // A large graph's layout starts in the worker as soon as the draft is here, beside the page's
  // download and its first render. Here in the render, not in an effect: the page below renders
  // in the same pass, before any effect runs, and would lay the graph out itself. Idempotent.
  const draft = reads.draft.data?.definition;
  if (draft) prefetchLayouts(draft);
  return (
    <Suspense fallback={<Loading what="the definition page" />}>
      <DefinitionPage orgId={orgId} projectId={projectId} reads={reads} />
    </Suspense>
  );
}
