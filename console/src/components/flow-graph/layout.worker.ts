/// <reference lib="webworker" />
import { computeLayout, graphsOf, type GraphLayout, type GraphName } from './graph-model.js';

/**
 * Lays a definition's graphs out (dagre) off the page's thread, so a large flow does not hold up
 * the editor and the page drawing themselves (the 200-node goal of the definition page). Asked
 * by layout-worker-client.ts: the graphs named, or every graph of the definition.
 */
self.onmessage = (event: MessageEvent<{ id: number; definition: unknown; graphs?: GraphName[] }>) => {
  const { id, definition, graphs } = event.data;
  const layouts: Partial<Record<GraphName, GraphLayout>> = {};
  for (const graph of graphs ?? graphsOf(definition)) layouts[graph] = computeLayout(definition, graph);
  self.postMessage({ id, layouts });
};
