import jwt from 'jsonwebtoken';
import type { FlowTrigger } from './console-setup.js';

/** An inbound hook of the benchmark's project, as the console's create answer gives it. */
export interface BenchHook {
  id: string;
  /** The hook's public URL (`…/v1/hooks/{id}`). */
  url: string;
  secret: string;
}

/**
 * Creates an inbound hook on the trigger's project through the console API, as its owner (the
 * `bench-owner` of setUpFlowTrigger), with the highest rate limit the API allows (100,000 a
 * minute), so the limit is counted on every delivery without refusing the benchmark's.
 */
export async function createBenchHook(gatewayUrl: string, consoleJwtSecret: string, trigger: FlowTrigger): Promise<BenchHook> {
  const consoleJwt = jwt.sign({ sub: 'bench-owner', roles: [] }, consoleJwtSecret, { algorithm: 'HS256', expiresIn: 3600 });
  const response = await fetch(`${gatewayUrl}/v1/orgs/${trigger.orgId}/projects/${trigger.projectId}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${consoleJwt}` },
    body: JSON.stringify({ name: 'benchmark hook', rateLimitPerMinute: 100_000 }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`creating the hook: expected 201, got ${response.status} ${text}`);
  const created = JSON.parse(text) as Record<string, unknown>;
  return { id: String(created.id), url: `${gatewayUrl}/v1/hooks/${String(created.id)}`, secret: String(created.secret) };
}
