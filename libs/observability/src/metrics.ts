import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One registry per service, so seven services in one process (embedded mode) each expose only
 * their own metrics, labelled with the service name, under Prometheus naming rules.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'runline_' });
  return registry;
}
