import { useEffect, useRef, useState } from 'react';
import { cachedLayout, layoutGraph, rememberLayout, type GraphLayout, type GraphName } from './graph-model.js';
import { layoutInWorker, layoutsInWorker, prefetchedLayout } from './layout-worker-client.js';

/**
 * The layout of one graph of a definition: a small graph's at once; a large graph's from the
 * worker (started ahead by the definition's route when it could be), keeping the previous layout
 * on screen until the next arrives.
 */
export function useLayout(definition: unknown, graph: GraphName): GraphLayout | null {
  // The first layout of a large graph is made here unless the route started it in the worker
  // already: nothing is on screen yet to keep, and starting the worker now would only add to the
  // wait. Later ones (the text being edited) go to the worker, so typing is not held up.
  const drawn = useRef<GraphName | null>(null);
  const first = drawn.current !== graph;
  drawn.current = graph;
  const cached = cachedLayout(definition, graph);
  const ahead = cached || !first ? undefined : prefetchedLayout(definition, graph);
  const immediate = cached ?? (ahead || (!first && layoutsInWorker(definition, graph)) ? undefined : layoutGraph(definition, graph));
  const [fromWorker, setFromWorker] = useState<{ definition: unknown; graph: GraphName; layout: GraphLayout } | null>(null);

  useEffect(() => {
    if (immediate) return;
    let live = true;
    const arriving = ahead ?? layoutInWorker(definition, [graph]).then((layouts) => layouts[graph]);
    void arriving.then((layout) => {
      const placed = layout ?? layoutGraph(definition, graph);
      rememberLayout(definition, graph, placed);
      if (live) setFromWorker({ definition, graph, layout: placed });
    });
    return () => {
      live = false;
    };
    // `ahead` follows from definition and graph: a render that makes a new promise for the same ones starts no other wait.
  }, [definition, graph, immediate]);

  return immediate ?? fromWorker?.layout ?? null;
}
