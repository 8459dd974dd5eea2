import { lazy, Suspense, useCallback, useMemo } from 'react';
import { Link } from 'react-router';
import { useResource } from '../../api/use-api.js';
import { ErrorBanner } from '../../components/error-banner.js';
import type { NodeRun } from '../../components/flow-graph/flow-graph.js';
import { Loading } from '../../components/loading.js';
import { projectPath } from '../../shell/paths.js';
import type { StepView } from './run-types.js';
import './run-graph.css';

// React Flow and dagre load with the graph, not with the console's first page.
const FlowGraph = lazy(() => import('../../components/flow-graph/flow-graph.js').then((module) => ({ default: module.FlowGraph })));

const GRAPH_OF_TARGET: Record<string, 'workflow' | 'bot' | 'flow'> = { AUTOMATION: 'workflow', BOT: 'bot', FLOW: 'flow' };

/** The element id of a step in the run page's timeline (steps-timeline.tsx gives each step one). */
export const stepElementId = (index: number) => `run-step-${index}`;

/**
 * The version in force when a run was accepted, i.e. the newest published at or before its
 * creation (a publish is in force for the next request, DESIGN section 8): the guess for a run
 * recorded before runs named their `definitionVersion`.
 */
export function versionInForce(history: Array<{ version: number; publishedAt: string }>, createdAt: string): number | null {
  const created = Date.parse(createdAt);
  const inForce = history.filter((row) => Date.parse(row.publishedAt) <= created).sort((a, b) => b.version - a.version)[0];
  return inForce?.version ?? null;
}

/** What ran at each node: the last step there (status, duration) and how often it ran. */
function runsByNode(steps: StepView[]): Map<string, NodeRun> {
  const runs = new Map<string, NodeRun>();
  for (const step of steps) runs.set(step.nodeId, { status: step.status, durationMs: step.durationMs, times: (runs.get(step.nodeId)?.times ?? 0) + 1 });
  return runs;
}

/**
 * The run on the graph of the definition version it used: the nodes that ran marked with their
 * status and duration, the failing node highlighted; a click on a node that ran brings its step
 * (in the timeline below) into view and focus.
 */
export function RunGraph({
  orgId,
  projectId,
  run,
  steps,
}: {
  orgId: string;
  projectId: string;
  run: { createdAt: string; targetType?: string | null; trace?: unknown; definitionVersion?: number | null };
  steps: StepView[];
}) {
  // The run names the version it used (null: a draft test run, or nothing published); only a run
  // recorded before runs did is placed in the version history by its creation time.
  const recorded = run.definitionVersion;
  const history = useResource(
    recorded === undefined ? (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition/versions', { params: { path: { orgId, projectId } } }) : null,
    [orgId, projectId, recorded],
  );
  const version = recorded !== undefined ? recorded : history.data ? versionInForce(history.data.data, run.createdAt) : null;
  const versionKnown = recorded !== undefined || history.data !== undefined;
  const document = useResource(
    version !== null ? (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/definition/versions/{version}', { params: { path: { orgId, projectId, version: String(version) } } }) : null,
    [orgId, projectId, version],
  );
  const traceGraph = run.trace && typeof run.trace === 'object' && 'graph' in run.trace ? String((run.trace as { graph: unknown }).graph) : null;
  const graph = traceGraph === 'workflow' || traceGraph === 'bot' || traceGraph === 'flow' ? traceGraph : GRAPH_OF_TARGET[run.targetType ?? ''] ?? 'workflow';
  const runs = useMemo(() => runsByNode(steps), [steps]);
  const failing = [...steps].reverse().find((step) => step.status === 'FAILED')?.nodeId ?? null;
  const openStep = useCallback(
    (nodeId: string) => {
      const index = steps.map((step) => step.nodeId).lastIndexOf(nodeId);
      const element = globalThis.document.getElementById(stepElementId(index));
      element?.scrollIntoView({ block: 'center' });
      element?.focus();
    },
    [steps],
  );

  return (
    <section aria-labelledby="run-graph-heading">
      <h2 id="run-graph-heading">Graph{version !== null ? ` (definition version ${version})` : ''}</h2>
      <ErrorBanner error={history.error ?? document.error} action="Reading the definition this run used" />
      {versionKnown && version === null && (
        <p className="muted">
          {recorded === null
            ? 'This run used no published version of the definition (a draft test run, or nothing was published), so there is no graph of it to draw.'
            : 'No published version of the definition is recorded from before this run (one older than the version history).'}{' '}
          See the <Link to={projectPath(orgId, projectId, 'definition')}>definition</Link>.
        </p>
      )}
      {(!versionKnown || (version !== null && !document.data)) && !history.error && !document.error && <Loading what="the graph" />}
      {document.data && (
        <Suspense fallback={<Loading what="the graph" />}>
          <p className="muted">Nodes that ran show their status and duration; a dashed node did not run. Select a node that ran to open its step.</p>
          <FlowGraph definition={document.data.definition} graph={graph} runs={runs} failingNode={failing} onOpenStep={openStep} label={`Graph of the ${graph} as this run went`} />
        </Suspense>
      )}
    </section>
  );
}
