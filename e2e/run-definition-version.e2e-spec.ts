import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, issueToken, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { waitForFinalInvocation, type InvocationBody } from './support/lifecycle-support.js';

/** An automation whose result says which version of it ran. */
function versionedAutomation(version: number): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
      start: 'n1',
      nodes: { n1: { type: 'return', value: `{ 'ranVersion': ${version}, 'orderId': payload.orderId }` } },
    },
  };
}

const BODY = { event: 'order.paid', payload: { orderId: 'o-1' } };

/**
 * Each run names the definition version it used (`definitionVersion`, docs/api.md; the console's
 * run page draws that version's graph): a run before a publish and one after it, a run accepted
 * before a publish that executed after it, and a draft test run. Gateway, invocation service and
 * scheduler on real PostgreSQL and NATS.
 */
describe('the definition version a run used', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  let token: string;
  const trigger = (suffix: '' | '-async', body: object) => http.post<InvocationBody>(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger${suffix}`, body, { bearer: token });
  const read = (invocationId: string, bearer = token) => http.get<InvocationBody>(`/v1/orgs/${project.orgId}/external-invocations/${invocationId}`, { bearer });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
    project = await createProject(http, 'AUTOMATION');
    token = (await issueToken(http, project, ['automation:trigger'])).token;
  }, 120_000);
  afterAll(() => system?.stop());

  it('a run started before a publish names the version before it, one started after names the new one; both keep them; the console reads the same', async () => {
    expect(await publishDefinition(http, project, versionedAutomation(1))).toBe(1);
    const before = await trigger('', BODY);
    expect(before).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: { ranVersion: 1 } } });
    // Accepted under version 1, due after the next publish.
    const delayed = await trigger('-async', { ...BODY, delaySeconds: 3 });
    expect(delayed.status).toBe(202);
    expect((await read(delayed.body.invocationId)).body).toMatchObject({ status: 'SCHEDULED', definitionVersion: 1 });

    expect(await publishDefinition(http, project, versionedAutomation(2))).toBe(2);
    // The premise: the delayed run has not started yet.
    expect((await read(delayed.body.invocationId)).body).toMatchObject({ status: 'SCHEDULED', definitionVersion: 1 });
    const after = await trigger('', BODY);
    expect(after).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: { ranVersion: 2 } } });

    const beforeRun = (await read(before.body.invocationId)).body;
    expect(beforeRun).toMatchObject({ status: 'SUCCEEDED', definitionVersion: 1, trace: { definitionVersion: 1 } });
    const afterRun = (await read(after.body.invocationId)).body;
    expect(afterRun).toMatchObject({ status: 'SUCCEEDED', definitionVersion: 2, trace: { definitionVersion: 2 } });
    // The console's run page reads the same route with a member's JWT.
    expect((await read(before.body.invocationId, project.ownerJwt)).body).toMatchObject({ definitionVersion: 1 });
    expect((await read(after.body.invocationId, project.ownerJwt)).body).toMatchObject({ definitionVersion: 2 });

    // The delayed run executed after the publish: it ran version 2 (section 8 of the design), and says so.
    const delayedRun = await waitForFinalInvocation(http, project.orgId, delayed.body.invocationId, token, 15_000);
    expect(delayedRun).toMatchObject({ status: 'SUCCEEDED', result: { ranVersion: 2 }, definitionVersion: 2, trace: { definitionVersion: 2 } });
  }, 60_000);

  it('a draft test run (runtimeStage "app") names no published version', async () => {
    const saved = await http.put(`/v1/orgs/${project.orgId}/projects/${project.projectId}/definition`, { definition: versionedAutomation(3) }, { bearer: project.ownerJwt });
    expect(saved.status).toBe(200);
    const test = await trigger('', { ...BODY, runtimeStage: 'app' });
    expect(test).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: { ranVersion: 3 } } });
    const run = (await read(test.body.invocationId)).body;
    expect(run).toMatchObject({ environment: 'TEST', definitionVersion: null });
    expect(run.trace).not.toHaveProperty('definitionVersion');
  });
});
