import { consoleJwt, HttpClient, queryDatabase } from '@runline/testing';

export interface ConsoleProject {
  orgId: string;
  projectId: string;
  ownerJwt: string;
  ownerId: string;
}

/**
 * The automation the journeys run: an amount of 0 fails at the `refuse` step, 1000 or more
 * waits for an approval, anything else succeeds.
 */
export const JOURNEY_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
    start: 'total',
    nodes: {
      total: { type: 'set', values: { total: 'payload.amount * 2' }, next: 'decide' },
      decide: {
        type: 'branch',
        cases: [
          { if: 'payload.amount >= 1000', next: 'gate' },
          { if: 'payload.amount > 0', next: 'done' },
        ],
        else: 'refuse',
      },
      gate: { type: 'approval', title: 'Refund order {{ payload.orderId }}?', next: 'done' },
      refuse: { type: 'fail', error: 'Order {{ payload.orderId }} has no amount' },
      done: { type: 'return', value: "{ 'orderId': payload.orderId, 'total': vars.total }" },
    },
  },
};

let counter = 0;

async function ok<T>(what: string, answer: Promise<{ status: number; body: T }>, status: number): Promise<T> {
  const result = await answer;
  if (result.status !== status) throw new Error(`${what}: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/** A fresh organization and owner with one automation project, its definition published. */
export async function createAutomationProject(http: HttpClient, name: string, definition: object = JOURNEY_AUTOMATION): Promise<ConsoleProject> {
  const ownerId = `console-owner-${process.pid}-${++counter}`;
  const ownerJwt = consoleJwt(ownerId);
  const org = await ok('org', http.post<{ orgId: string }>('/v1/orgs', { name: `${name} org` }, { bearer: ownerJwt }), 201);
  const project = await ok('project', http.post<{ projectId: string }>(`/v1/orgs/${org.orgId}/projects`, { name, type: 'AUTOMATION' }, { bearer: ownerJwt }), 201);
  const base = `/v1/orgs/${org.orgId}/projects/${project.projectId}`;
  await ok('definition', http.put(`${base}/definition`, { definition }, { bearer: ownerJwt }), 200);
  await ok('publish', http.post(`${base}/publish`, {}, { bearer: ownerJwt }), 200);
  return { orgId: org.orgId, projectId: project.projectId, ownerJwt, ownerId };
}

/** An API token of the project that may trigger it, made through the console API. */
export async function triggerToken(http: HttpClient, project: ConsoleProject): Promise<string> {
  const created = await ok(
    'token',
    http.post<{ token: string }>(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-tokens`, { name: 'browser tests', scopes: ['automation:trigger'] }, { bearer: project.ownerJwt }),
    201,
  );
  return created.token;
}

/** Starts a run as a client would (async trigger with the API token); answers its id. */
export async function startRun(
  http: HttpClient,
  project: ConsoleProject,
  token: string,
  payload: { orderId: string; amount: number },
  options: { headers?: Record<string, string>; body?: Record<string, unknown> } = {},
): Promise<string> {
  const accepted = await ok(
    'trigger',
    http.post<{ invocationId: string }>(
      `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`,
      { event: 'order.paid', payload, ...options.body },
      { bearer: token, headers: options.headers ?? {} },
    ),
    202,
  );
  return accepted.invocationId;
}

/** Reads a run (console JWT) until `done` says so. */
export async function waitForRun(http: HttpClient, project: ConsoleProject, invocationId: string, done: (status: string) => boolean, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await http.get<{ status: string }>(`/v1/orgs/${project.orgId}/external-invocations/${invocationId}`, { bearer: project.ownerJwt });
    if (answer.status === 200 && done(answer.body.status)) return answer.body;
    if (Date.now() > deadline) throw new Error(`run ${invocationId}: still ${answer.status} ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `count` finished runs of the project written straight into the invocation read model, as
 * bench/dashboard.bench.ts does: spread over the last `hours`, 85% SUCCEEDED, 10% FAILED, 5%
 * TIMEOUT. Only a bulk insert makes thousands of runs in a test's time.
 */
export async function insertRuns(databaseUrl: string, project: Pick<ConsoleProject, 'orgId' | 'projectId'>, count: number, hours = 23): Promise<void> {
  await queryDatabase(
    databaseUrl,
    `INSERT INTO invocation.invocation_views (id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
     SELECT id, $2::uuid, $3::uuid, NULL, 'AUTOMATION',
            jsonb_build_object(
              'invocationId', id, 'status', status, 'environment', 'PRODUCTION', 'triggerSource', 'WEBHOOK', 'mode', 'ASYNC',
              'targetType', 'AUTOMATION', 'startedAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'completedAt', to_char((created_at + duration_ms * interval '1 ms') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'durationMs', duration_ms,
              'errorMessage', CASE status WHEN 'FAILED' THEN 'Order ' || n || ' has no amount' WHEN 'TIMEOUT' THEN 'Time limit of 30000 ms exceeded' END,
              'requestPayload', jsonb_build_object('orderId', n::text, 'amount', n % 100),
              'result', CASE WHEN status = 'SUCCEEDED' THEN jsonb_build_object('orderId', n::text) END,
              'trace', NULL, 'steps', '[]'::jsonb, 'callbackAttempts', '[]'::jsonb, 'scheduledFor', NULL, 'pendingApproval', NULL,
              'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'updatedAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
            3, created_at, created_at
       FROM (
         SELECT n, gen_random_uuid() AS id, now() - interval '5 minutes' - (n::float / $1) * $4 * interval '1 hour' AS created_at,
                CASE WHEN n % 20 = 0 THEN 'TIMEOUT' WHEN n % 10 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END AS status,
                (20 + (n * 7919) % 900)::int AS duration_ms
           FROM generate_series(1, $1::int) AS n
       ) s`,
    [count, project.orgId, project.projectId, hours],
  );
  await queryDatabase(databaseUrl, 'ANALYZE invocation.invocation_views');
}
