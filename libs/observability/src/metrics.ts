import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * One registry per service, so six services in one process (embedded mode) each expose only
 * their own metrics, labelled with the service name, under Prometheus naming rules.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: 'runline_' });
  return registry;
}

/** Counts and times every HTTP request by method, matched route and status code. */
export function httpMetricsMiddleware(registry: Registry) {
  const duration = new Histogram({
    name: 'runline_http_request_duration_seconds',
    help: 'Time to answer an HTTP request.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const total = new Counter({
    name: 'runline_http_requests_total',
    help: 'HTTP requests answered.',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      // The route pattern, not the raw path, keeps label cardinality bounded.
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      const labels = { method: req.method, route, status_code: String(res.statusCode) };
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      total.inc(labels);
    });
    next();
  };
}
