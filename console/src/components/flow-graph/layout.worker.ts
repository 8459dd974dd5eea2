/// <reference lib="webworker" />
import { computeLayout, type GraphName } from './graph-model.js';

/**
 * Lays a graph out (dagre) off the page's thread, so a large flow does not hold up the editor
 * and the page drawing themselves (the 200-node goal of the definition page).
 */
self.onmessage = (event: MessageEvent<{ id: number; definition: unknown; graph: GraphName }>) => {
  const { id, definition, graph } = event.data;
  self.postMessage({ id, layout: computeLayout(definition, graph) });
};
