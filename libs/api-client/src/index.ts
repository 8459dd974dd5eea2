import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/** A body schema of the published document, by its component name: `Schema<'Invocation'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

import type { RunlineAuth } from './auth.js';

export type { RunlineAuth };

export type RunlineClient = Client<paths>;

/**
 * A typed client of Runline's public and console APIs, from the OpenAPI document the gateway
 * publishes at `/v1/openapi.json`: every path, parameter, body and answer is checked by the
 * compiler. Each call answers `{ data, error, response }`: `data` for a documented success,
 * `error` (`{ error: string, … }`) for a documented refusal.
 *
 *   const runline = createRunlineClient('https://runline.example.com', process.env.RUNLINE_TOKEN);
 *   const { data, error } = await runline.POST('/v1/orgs/{orgId}/flows/{projectId}/trigger-async', {
 *     params: { path: { orgId, projectId } },
 *     body: { event: 'signup', customerId: 'c-1' },
 *   });
 */
export function createRunlineClient(baseUrl: string, auth?: RunlineAuth, options: Omit<ClientOptions, 'baseUrl'> = {}): RunlineClient {
  const headers: Record<string, string> = {};
  if (typeof auth === 'string') headers.authorization = `Bearer ${auth}`;
  else if (auth) headers['x-api-key'] = auth.apiKey;
  return createClient<paths>({ ...options, baseUrl: baseUrl.replace(/\/+$/, ''), headers: { ...headers, ...(options.headers as Record<string, string> | undefined) } });
}

// Following a run as it happens (server-sent events), resumed after a dropped connection.
export { followRun, RunEventsError, type FollowRunOptions, type RunEvent } from './run-events.js';
