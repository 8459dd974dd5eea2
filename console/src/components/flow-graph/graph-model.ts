import { Graph, layout } from '@dagrejs/dagre';

/** The graphs a definition may hold (DESIGN section 4): a chatbot's `bot` and `flow`, an automation's `workflow`. */
export const GRAPH_NAMES = ['workflow', 'bot', 'flow'] as const;
export type GraphName = (typeof GRAPH_NAMES)[number];

/** One node of a definition's graph, placed: its id, type, the words shown, and where it sits. */
export interface PlacedNode {
  id: string;
  type: string;
  /** One line of what the node does (its text, title, error, action name or method and URL). */
  summary: string;
  isStart: boolean;
  x: number;
  y: number;
}

/** A transition: `next`, a branch case, `else`, an approval's `onReject`. */
export interface PlacedEdge {
  id: string;
  source: string;
  target: string;
  /** What takes this way, when it is not plain `next`: `case 1`, `else`, `on reject`. */
  label: string | null;
  /** The target is not a node of the graph (the editor shows the error; the graph skips the edge). */
}

export interface GraphLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

/** The size each node is drawn at; the layout spaces them by it. */
export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 64;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The graphs present in a definition document, in the order they are drawn. */
export function graphsOf(definition: unknown): GraphName[] {
  if (!isObject(definition)) return [];
  return GRAPH_NAMES.filter((name) => isObject(definition[name]) && isObject((definition[name] as Record<string, unknown>).nodes));
}

function summaryOf(node: Record<string, unknown>): string {
  const type = String(node.type ?? '');
  if (type === 'http') return [text(node.method), text(node.url)].filter(Boolean).join(' ');
  if (type === 'action') return text(node.name) ?? '';
  if (type === 'branch') return `${Array.isArray(node.cases) ? node.cases.length : 0} cases, else`;
  if (type === 'wait') return typeof node.seconds === 'number' ? `${node.seconds} s` : (text(node.until) ?? '');
  if (type === 'set' && isObject(node.values)) return Object.keys(node.values).join(', ');
  return text(node.text) ?? text(node.title) ?? text(node.error) ?? text(node.value) ?? '';
}

function edgesOf(id: string, node: Record<string, unknown>): Array<Omit<PlacedEdge, 'id'>> {
  const edges: Array<Omit<PlacedEdge, 'id'>> = [];
  const add = (target: unknown, label: string | null) => {
    if (typeof target === 'string' && target !== '') edges.push({ source: id, target, label });
  };
  add(node.next, null);
  if (Array.isArray(node.cases)) node.cases.forEach((branch, index) => isObject(branch) && add(branch.next, `case ${index + 1}`));
  add(node.else, 'else');
  add(node.onReject, 'on reject');
  return edges;
}

/**
 * The nodes and transitions of one graph of a definition, laid out top to bottom by dagre.
 * Works on any JSON (a draft being typed): what is not a node is skipped, and a transition to
 * a node that does not exist is left out (the editor reports it).
 */
/** A layout already computed for this document object and graph, if any. */
export function cachedLayout(definition: unknown, graphName: GraphName): GraphLayout | undefined {
  return isObject(definition) ? LAYOUTS.get(definition)?.get(graphName) : undefined;
}

export function rememberLayout(definition: unknown, graphName: GraphName, placed: GraphLayout): void {
  if (isObject(definition)) LAYOUTS.set(definition, (LAYOUTS.get(definition) ?? new Map<GraphName, GraphLayout>()).set(graphName, placed));
}

/**
 * `computeLayout`, kept per document object: a render React throws away (one that suspended)
 * loses its memo, and the same document is drawn again after a reload of the page's data.
 */
export function layoutGraph(definition: unknown, graphName: GraphName): GraphLayout {
  const cached = cachedLayout(definition, graphName);
  if (cached) return cached;
  const placed = computeLayout(definition, graphName);
  rememberLayout(definition, graphName, placed);
  return placed;
}

const LAYOUTS = new WeakMap<object, Map<GraphName, GraphLayout>>();

export function computeLayout(definition: unknown, graphName: GraphName): GraphLayout {
  const graph = isObject(definition) ? definition[graphName] : undefined;
  const nodesObject = isObject(graph) && isObject(graph.nodes) ? graph.nodes : {};
  const start = isObject(graph) ? graph.start : undefined;
  const ids = Object.keys(nodesObject).filter((id) => isObject(nodesObject[id]));

  const dagreGraph = new Graph({ multigraph: true });
  dagreGraph.setGraph({ rankdir: 'TB', nodesep: 32, ranksep: 56, marginx: 16, marginy: 16 });
  dagreGraph.setDefaultEdgeLabel(() => ({}));
  for (const id of ids) dagreGraph.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });

  const edges: PlacedEdge[] = [];
  for (const id of ids) {
    for (const edge of edgesOf(id, nodesObject[id] as Record<string, unknown>)) {
      if (!(edge.target in nodesObject)) continue;
      const edgeId = `${edge.source}->${edge.target}:${edge.label ?? 'next'}`;
      edges.push({ ...edge, id: edgeId });
      dagreGraph.setEdge(edge.source, edge.target, {}, edgeId);
    }
  }
  layout(dagreGraph);

  const nodes = ids.map((id) => {
    const node = nodesObject[id] as Record<string, unknown>;
    const placed = dagreGraph.node(id);
    return {
      id,
      type: String(node.type ?? '?'),
      summary: summaryOf(node),
      isStart: id === start,
      // dagre gives centres; the graph library places corners.
      x: placed.x - NODE_WIDTH / 2,
      y: placed.y - NODE_HEIGHT / 2,
    };
  });
  const size = dagreGraph.graph();
  return { nodes, edges, width: size.width ?? 0, height: size.height ?? 0 };
}
