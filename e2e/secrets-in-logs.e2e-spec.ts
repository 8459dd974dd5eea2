import { PassThrough } from 'node:stream';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, issueToken } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';

/** With every log line on (debug), no API token, JWT or callback secret reaches the log. */
describe('secrets never reach the logs', () => {
  let system: TestSystem;
  let logged = '';

  beforeAll(async () => {
    const destination = new PassThrough();
    destination.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    system = await startTestSystem([gatewayService, invocationService], { logDestination: destination, logLevel: 'debug' });
  });
  afterAll(() => system?.stop());

  it('redacts tokens in request logs, successful or refused', async () => {
    const http = new HttpClient(system.url('gateway'));
    const project = await createProject(http, 'CHATBOT');
    const { token } = await issueToken(http, project, ['flow:trigger']);
    const revokedCopy = token.slice(0, -2) + 'zz';
    const trigger = `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger`;
    await http.post(trigger, { event: 'e', customerId: 'c' }, { bearer: token });
    await http.post(trigger, { event: 'e', customerId: 'c' }, { headers: { 'x-api-key': token } });
    await http.post(trigger, { event: 'e', customerId: 'c' }, { bearer: revokedCopy });
    await http.patch(
      `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`,
      { defaultCallbackUrl: 'https://hooks.example.com/x', defaultCallbackSecret: 'callback-secret-do-not-log' },
      { bearer: project.ownerJwt },
    );
    // The change reaches the invocation service as an event: wait until it has applied it (its
    // copy has the URL), then a little for the lines it logs right after that commit to be read.
    await eventually('the callback settings to reach the invocation service', async () => {
      const [copy] = await queryDatabase(system.database.url, 'SELECT default_callback_url FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
      return copy?.default_callback_url === 'https://hooks.example.com/x' ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(logged).toContain('"msg":"request"'); // the access log is on, so the check means something
    expect(logged).toContain('[REDACTED]');
    for (const secret of [token, revokedCopy, project.ownerJwt, 'callback-secret-do-not-log']) expect(logged).not.toContain(secret);
  });
});
