import { Background, Controls, Handle, Position, ReactFlow, useReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { memo, useEffect, useMemo, useRef } from 'react';
import { NODE_HEIGHT, NODE_WIDTH, type GraphLayout, type GraphName } from './graph-model.js';
import { useLayout } from './use-layout.js';
import './flow-graph.css';

/** What a run did at one node: the last time it ran there. */
export interface NodeRun {
  status: string;
  durationMs?: number;
  /** How many times the node ran (a loop runs one node more than once). */
  times: number;
}

interface FlowNodeData extends Record<string, unknown> {
  nodeId: string;
  type: string;
  summary: string;
  isStart: boolean;
  /** Set on a run's graph; a node that did not run has none. */
  run?: NodeRun;
  /** The node the run failed at. */
  failing: boolean;
  /** A problem the editor found in this node (the definition page). */
  problem: boolean;
  onOpen?: (nodeId: string) => void;
}

const STATUS_MARK: Record<string, string> = { SUCCEEDED: '✓', FAILED: '✕', SUSPENDED: '⏸' };

function durationText(ms: number | undefined): string {
  if (ms === undefined) return '';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** One node: id and type, what it does; on a run's graph its status in a word and duration. */
const FlowNode = memo(function FlowNode({ data }: NodeProps<Node<FlowNodeData>>) {
  const classes = ['flow-node'];
  if (data.run) classes.push(`flow-node-${data.run.status.toLowerCase()}`);
  else if (data.onOpen) classes.push('flow-node-skipped');
  if (data.failing) classes.push('flow-node-failing');
  if (data.problem) classes.push('flow-node-problem');
  const body = (
    <>
      <span className="flow-node-head">
        <span className="flow-node-id">{data.nodeId}</span> <span className="flow-node-type">{data.type}</span>
        {data.isStart && <span className="flow-node-start">start</span>}
      </span>
      {data.run ? (
        <span className="flow-node-status">
          <span aria-hidden="true">{STATUS_MARK[data.run.status] ?? '•'}</span> {data.failing ? 'failed here' : data.run.status.toLowerCase()}
          {data.run.durationMs !== undefined && ` · ${durationText(data.run.durationMs)}`}
          {data.run.times > 1 && ` · ran ${data.run.times}×`}
        </span>
      ) : data.onOpen ? (
        <span className="flow-node-status muted">did not run</span>
      ) : (
        <span className="flow-node-summary">{data.problem ? `⚠ problem: see the editor` : data.summary}</span>
      )}
    </>
  );
  return (
    <>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      {data.onOpen && data.run ? (
        <button type="button" className={classes.join(' ')} onClick={() => data.onOpen?.(data.nodeId)}>
          <span className="visually-hidden">Open step </span>
          {body}
        </button>
      ) : (
        <div className={classes.join(' ')}>{body}</div>
      )}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </>
  );
});

const NODE_TYPES = { step: FlowNode };
const FIT_VIEW = { padding: 0.1, maxZoom: 1 };

/** Fits the view again when the graph's nodes change (a node added or renamed in the editor). */
function FitWhenNodesChange({ signature }: { signature: string }) {
  const { fitView } = useReactFlow();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    void fitView(FIT_VIEW);
  }, [signature, fitView]);
  return null;
}
const EMPTY_LAYOUT: GraphLayout = { nodes: [], edges: [], width: 0, height: 0 };

/**
 * A graph of a definition, drawn read-only: its nodes and transitions (`next`, branch cases,
 * `else`, `onReject`) laid out by dagre. On a run's page, `runs` marks the nodes that ran with
 * their status and duration, `failingNode` is highlighted, and a click on a node that ran calls
 * `onOpenStep`. Pans and zooms inside its box, so it fits a phone.
 */
export function FlowGraph({
  definition,
  graph,
  runs,
  failingNode,
  problemNodes,
  onOpenStep,
  label,
}: {
  definition: unknown;
  graph: GraphName;
  runs?: ReadonlyMap<string, NodeRun>;
  failingNode?: string | null;
  problemNodes?: ReadonlySet<string>;
  onOpenStep?: (nodeId: string) => void;
  /** Names the graph for assistive technology, e.g. "Graph of the workflow". */
  label: string;
}) {
  const placed: GraphLayout = useLayout(definition, graph) ?? EMPTY_LAYOUT;
  const laidOut = placed !== EMPTY_LAYOUT;
  const nodes = useMemo<Array<Node<FlowNodeData>>>(
    () =>
      placed.nodes.map((node) => ({
        id: node.id,
        type: 'step',
        position: { x: node.x, y: node.y },
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        // React Flow lets clicks through nodes that cannot be selected; a node that opens its step takes them.
        className: onOpenStep && runs?.has(node.id) ? 'flow-node-clickable' : undefined,
        data: {
          nodeId: node.id,
          type: node.type,
          summary: node.summary,
          isStart: node.isStart,
          run: runs?.get(node.id),
          failing: failingNode === node.id,
          problem: problemNodes?.has(node.id) ?? false,
          onOpen: onOpenStep,
        },
      })),
    [placed, runs, failingNode, problemNodes, onOpenStep],
  );
  const edges = useMemo<Edge[]>(
    () =>
      placed.edges.map((edge) => ({
        id: edge.id,
        source: edge.source,
        target: edge.target,
        label: edge.label ?? undefined,
        animated: false,
        className: runs?.has(edge.source) && runs.has(edge.target) ? 'flow-edge-ran' : undefined,
      })),
    [placed, runs],
  );

  if (!laidOut) return <p className="muted">Laying the graph out…</p>;
  if (placed.nodes.length === 0) return <p className="muted">No nodes to draw yet.</p>;
  return (
    <div className="flow-graph" role="figure" aria-label={`${label}: ${placed.nodes.length} nodes, ${placed.edges.length} transitions`} data-nodes={placed.nodes.length}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_TYPES}
        fitView
        fitViewOptions={FIT_VIEW}
        minZoom={0.1}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        panOnScroll={false}
        zoomOnScroll={false}
        preventScrolling={false}
        proOptions={{ hideAttribution: false }}
      >
        <FitWhenNodesChange signature={placed.nodes.map((node) => node.id).join('\n')} />
        <Background gap={24} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
