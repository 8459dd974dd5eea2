import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { startService } from '@runline/runtime';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken } from './gateway-fixtures.js';
import { runPath, type Json } from './support/runs-support.js';

/**
 * The spec's 500 `Flow sync trigger failed`: the gateway answers it to a sync trigger whose
 * StartInvocation request gets no answer from the invocation service. Here the invocation
 * service is stopped for real, so nothing answers on the bus.
 */
describe('sync trigger while the invocation service is unreachable', () => {
  let system: TestSystem;
  let http: HttpClient;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
  }, 60_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('500 Flow sync trigger failed, nothing runs; the same request with its idempotency key runs once the service is back', async () => {
    const project = await createPublishedProject(http, 'CHATBOT');
    const { token } = await issueToken(http, project, ['flow:trigger']);
    const body = { event: 'order.created', customerId: 'c-1', orderId: '42' };
    const keyed = (key: string) => ({ bearer: token, headers: { 'x-idempotency-key': key } });
    const runs = async () =>
      Number((await queryDatabase(system.database.url, 'SELECT count(*)::int AS n FROM invocation.invocations WHERE project_id = $1', [project.projectId]))[0]?.n);

    const before = await http.post<Json>(runPath('flowTrigger', project), body, keyed('before'));
    expect(before.status).toBe(200);

    await system.services.get('invocation')!.stop();
    const failed = await http.post<Json>(runPath('flowTrigger', project), body, keyed('while-down'));
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ error: 'Flow sync trigger failed' });
    expect(await runs()).toBe(1);

    // The spec: retry with the same idempotency key.
    system.services.set(
      'invocation',
      await startService(invocationService, {
        databaseUrl: system.database.url,
        bus: system.bus,
        httpPort: 0,
        environment: system.environment,
        logger: createLogger({ service: 'invocation', level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      }),
    );
    const retried = await http.post<Json>(runPath('flowTrigger', project), body, keyed('while-down'));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'SUCCEEDED' });
    expect(await runs()).toBe(2);
  }, 60_000);
});
