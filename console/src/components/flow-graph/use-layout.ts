import { useEffect, useRef, useState } from 'react';
import { cachedLayout, layoutGraph, rememberLayout, type GraphLayout, type GraphName } from './graph-model.js';

/** Graphs of at least this many nodes are laid out in the worker; smaller ones at once, here. */
const WORKER_FROM_NODES = 40;

let worker: Worker | null | undefined;
let nextId = 0;
const waiting = new Map<number, (layout: GraphLayout) => void>();

function layoutWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (event: MessageEvent<{ id: number; layout: GraphLayout }>) => {
      waiting.get(event.data.id)?.(event.data.layout);
      waiting.delete(event.data.id);
    };
  } catch {
    worker = null;
  }
  return worker;
}

function nodeCount(definition: unknown, graph: GraphName): number {
  const nodes = (definition as Record<string, { nodes?: object } | undefined> | null)?.[graph]?.nodes;
  return nodes && typeof nodes === 'object' ? Object.keys(nodes).length : 0;
}

/**
 * The layout of one graph of a definition: the first one and a small graph's at once; a large
 * graph's later ones from the worker, keeping the previous layout on screen until they arrive.
 */
export function useLayout(definition: unknown, graph: GraphName): GraphLayout | null {
  // The first layout of a graph is made here: nothing is on screen yet to keep, and starting the
  // worker (its own copy of dagre) would only add to the wait. Later ones (the text being edited)
  // go to the worker when the graph is large, so typing is not held up.
  const drawn = useRef<GraphName | null>(null);
  const first = drawn.current !== graph;
  const immediate =
    cachedLayout(definition, graph) ?? (first || nodeCount(definition, graph) < WORKER_FROM_NODES || !layoutWorker() ? layoutGraph(definition, graph) : undefined);
  drawn.current = graph;
  const [fromWorker, setFromWorker] = useState<{ definition: unknown; graph: GraphName; layout: GraphLayout } | null>(null);

  useEffect(() => {
    if (immediate) return;
    const id = ++nextId;
    let live = true;
    waiting.set(id, (layout) => {
      rememberLayout(definition, graph, layout);
      if (live) setFromWorker({ definition, graph, layout });
    });
    layoutWorker()!.postMessage({ id, definition, graph });
    return () => {
      live = false;
    };
  }, [definition, graph, immediate]);

  return immediate ?? fromWorker?.layout ?? null;
}
