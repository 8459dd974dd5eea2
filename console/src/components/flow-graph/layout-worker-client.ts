import type { GraphLayout, GraphName } from './graph-model.js';

/**
 * The layout worker (layout.worker.ts, its own copy of dagre) and what is asked of it. This
 * module is in the console's first bundle (definition-route.tsx starts layouts from it) and
 * imports nothing of dagre or React Flow: those load with the pages that draw graphs.
 */

/** Graphs of at least this many nodes are laid out in the worker; smaller ones at once, on the page. */
export const WORKER_FROM_NODES = 40;
/** Layouts started ahead, kept for the page that draws them; the oldest is dropped beyond this many. */
const PREFETCHED_KEPT = 4;

type Answer = { id: number; layouts: Partial<Record<GraphName, GraphLayout>> };

let worker: Worker | null | undefined;
let nextId = 0;
const waiting = new Map<number, (layouts: Answer['layouts']) => void>();
/** By the definition's JSON text: the page parses its own copy of the document it was given. */
const prefetched = new Map<string, Promise<Answer['layouts']>>();
/** Documents already looked at by prefetchLayouts (it is called on every render of the route). */
const offered = new WeakSet<object>();

function layoutWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<Answer>) => {
      waiting.get(event.data.id)?.(event.data.layouts);
      waiting.delete(event.data.id);
    };
  } catch {
    worker = null;
  }
  return worker;
}

export function nodeCount(definition: unknown, graph: GraphName): number {
  const nodes = (definition as Record<string, { nodes?: object } | undefined> | null)?.[graph]?.nodes;
  return nodes && typeof nodes === 'object' ? Object.keys(nodes).length : 0;
}

/** Whether the worker lays this graph out (it is large, and workers run here). */
export function layoutsInWorker(definition: unknown, graph: GraphName): boolean {
  return nodeCount(definition, graph) >= WORKER_FROM_NODES && layoutWorker() !== null;
}

/** Lays out `graphs` of a definition in the worker (every graph it holds when omitted). */
export function layoutInWorker(definition: unknown, graphs?: GraphName[]): Promise<Answer['layouts']> {
  const id = ++nextId;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    layoutWorker()!.postMessage({ id, definition, graphs });
  });
}

/**
 * Starts the layout of a large definition's graphs as soon as the document has arrived, while
 * the page that draws it is still loading (its code is most of the wait): on two cores the
 * worker lays out in parallel with the page's own start, instead of after it.
 */
export function prefetchLayouts(definition: object): void {
  if (offered.has(definition)) return;
  offered.add(definition);
  const large = (['workflow', 'bot', 'flow'] as const).some((graph) => nodeCount(definition, graph) >= WORKER_FROM_NODES);
  if (!large || layoutWorker() === null) return;
  const key = JSON.stringify(definition);
  if (prefetched.has(key)) return;
  prefetched.set(key, layoutInWorker(definition));
  if (prefetched.size > PREFETCHED_KEPT) prefetched.delete(prefetched.keys().next().value!);
}

/** The layout started by prefetchLayouts for a document with this content, if one was. */
export function prefetchedLayout(definition: unknown, graph: GraphName): Promise<GraphLayout | undefined> | undefined {
  return prefetched.get(JSON.stringify(definition))?.then((layouts) => layouts[graph]);
}
