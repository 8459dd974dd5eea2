import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { holdRowsAsTheyCome } from './support/row-locks.js';
import { invocationPath, runPath } from './support/runs-support.js';

/** `DELETE /v1/orgs/{orgId}/projects/{projectId}` (OWNER): 204, then the project is gone for every caller. */
describe('project deletion', () => {
  let system: TestSystem;
  let http: HttpClient;
  const body = { event: 'order.created', customerId: 'c-1', orderId: '42' };

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService]);
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  const projectPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}`;

  async function withMembers(): Promise<ProjectFixture> {
    const project = await createPublishedProject(http, 'CHATBOT');
    for (const [userId, role] of [['deletion-editor', 'EDITOR'], ['deletion-viewer', 'VIEWER']]) {
      expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId, role }, { bearer: project.ownerJwt })).status).toBe(201);
    }
    return project;
  }

  it('is for the OWNER only: an EDITOR and a VIEWER get 403, a non-member 404', async () => {
    const project = await withMembers();
    for (const user of ['deletion-editor', 'deletion-viewer']) {
      expect(await http.delete(projectPath(project), { bearer: consoleJwt(user) })).toMatchObject({
        status: 403,
        body: { error: 'This action requires the OWNER role' },
      });
    }
    expect(await http.delete(projectPath(project), { bearer: consoleJwt('deletion-stranger') })).toMatchObject({
      status: 404,
      body: { error: 'Organization not found' },
    });
    expect((await http.get(`${projectPath(project)}/api-settings`, { bearer: project.ownerJwt })).status).toBe(200);
  });

  it('answers 204; then token calls get 404 Project not found, console routes 404, a second DELETE 404', async () => {
    const project = await withMembers();
    const { token } = await issueToken(http, project, ['flow:trigger']);
    expect((await http.post(runPath('flowTrigger', project), { ...body, dryRun: true }, { bearer: token })).status).toBe(200);

    const deleted = await http.delete(projectPath(project), { bearer: project.ownerJwt });
    expect(deleted.status).toBe(204);

    for (const endpoint of ['flowTrigger', 'flowTriggerAsync'] as const) {
      expect(await http.post(runPath(endpoint, project), body, { bearer: token })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    }
    expect(await http.get(`${projectPath(project)}/api-settings`, { bearer: project.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect(await http.delete(projectPath(project), { bearer: project.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
  });

  it('a run scheduled before the deletion fails when it comes up', async () => {
    const project = await createPublishedProject(http, 'CHATBOT');
    const { token } = await issueToken(http, project, ['flow:trigger']);
    // The job is held from the moment it is written (the scheduler's claim, FOR UPDATE SKIP
    // LOCKED, skips it) until the deletion was answered, so the run comes up after the deletion
    // however long the deletion takes on this machine.
    const holding = holdRowsAsTheyCome(system.database.url, `SELECT name FROM scheduler.scheduled_jobs WHERE project_id = '${project.projectId}' FOR KEY SHARE`, 1, 15_000);
    const accepted = await http.post<{ invocationId: string; status: string }>(runPath('flowTriggerAsync', project), { ...body, delaySeconds: 1 }, { bearer: token });
    expect(accepted.body.status).toBe('SCHEDULED');
    const held = await holding;
    try {
      // Once the project is gone its token reads nothing (404), so the run is read from the table.
      expect((await http.delete(projectPath(project), { bearer: project.ownerJwt })).status).toBe(204);
    } finally {
      await held.release();
    }
    const ended = await eventually(
      'the scheduled run to come up',
      async () => {
        const rows = await queryDatabase(system.database.url, `SELECT document->>'status' AS status, document->>'errorMessage' AS error FROM invocation.invocation_views WHERE id = $1`, [
          accepted.body.invocationId,
        ]);
        return rows[0] && rows[0].status !== 'SCHEDULED' && rows[0].status !== 'QUEUED' ? rows[0] : undefined;
      },
      15_000,
    );
    expect(ended).toEqual({ status: 'FAILED', error: 'The project was deleted before the run started' });
    expect((await http.get(invocationPath(project.orgId, accepted.body.invocationId), { bearer: token })).status).toBe(404);
  });
});
