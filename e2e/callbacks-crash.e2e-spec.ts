import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, VALID_AUTOMATION_DEFINITION } from './gateway-fixtures.js';
import { startCallbackProcess } from './support/callback-process.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './support/https-receiver.js';
import { eventually, type InvocationBody } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';

/** The callback service killed with -9 between two attempts of a delivery, then started again. */
describe('callback service crash between attempts', () => {
  let system: TestSystem;
  let certificate: TestCertificate;
  let receiver: HttpsReceiver;
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    receiver = await startHttpsReceiver(certificate);
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
  }, 60_000);

  afterAll(async () => {
    for (const started of processes) await started.stop();
    await system?.stop();
    await receiver?.close();
    await certificate?.remove();
  });

  it('after kill -9 and a restart the delivery completes, and the repeat carries the same webhook-id', async () => {
    const http = new HttpClient(system.url('gateway'));
    const project = await createPublishedProject(http, 'AUTOMATION', VALID_AUTOMATION_DEFINITION);
    const token = (await issueToken(http, project, ['automation:trigger'])).token;
    receiver.on('/crash', (call) => ({ status: call === 1 ? 500 : 200 }));
    const first = await startCallbackProcess(system, certificate.caFile);
    processes.push(first);

    const accepted = await http.post<InvocationBody>(
      `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`,
      { payload: { orderId: 'o-1', amount: 1 }, webhookUrl: `${receiver.url}/crash`, webhookSecret: 'crash-secret' },
      { bearer: token },
    );
    expect(accepted.status).toBe(202);
    // The first attempt is recorded with its next attempt time; then the process dies.
    await eventually('the first attempt to be recorded', async () => {
      const [row] = await queryDatabase(system.database.url, `SELECT attempts_made FROM callback.callback_deliveries WHERE invocation_id = $1`, [
        accepted.body.invocationId,
      ]);
      return Number(row?.attempts_made) === 1 ? true : undefined;
    });
    first.child.kill('SIGKILL');
    expect(await first.exit(5000)).toBe('SIGKILL');
    expect(receiver.at('/crash')).toHaveLength(1);
    // Past the second attempt's time while no callback process runs: nothing sends it. (A wait
    // for the recorded time to pass, not for any work to finish.)
    const [due] = await queryDatabase(system.database.url, `SELECT next_attempt_at FROM callback.callback_deliveries WHERE invocation_id = $1`, [
      accepted.body.invocationId,
    ]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (due!.next_attempt_at as Date).getTime() + 200 - Date.now())));
    expect(receiver.at('/crash')).toHaveLength(1);

    processes.push(await startCallbackProcess(system, certificate.caFile));
    const attempts = await eventually('both attempts in callbackAttempts', async () => {
      const read = await http.get<InvocationBody>(`/v1/orgs/${project.orgId}/external-invocations/${accepted.body.invocationId}`, { bearer: token });
      const list = read.body.callbackAttempts as Array<Record<string, unknown>>;
      return list.length >= 2 ? list : undefined;
    }, 15_000);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    const requests = receiver.at('/crash');
    expect(requests).toHaveLength(2);
    // The receiver dedupes by webhook-id: both requests are the same callback.
    expect(requests[1]!.headers['webhook-id']).toBe(requests[0]!.headers['webhook-id']);
    expect(requests[1]!.raw.equals(requests[0]!.raw)).toBe(true);
  }, 60_000);
});
