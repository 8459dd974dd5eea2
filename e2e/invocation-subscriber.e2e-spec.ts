import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { eventRegistration } from '@runline/contracts';
import { HttpClient, queryDatabase, startTestSystem, testNatsUrl, type TestSystem } from '@runline/testing';
import { followInvocationEvents, type InvocationEvent, type Subscription } from '@runline/invocation-subscriber-example';
import { createPublishedProject, issueToken, setRateLimit, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';

/**
 * The example internal subscriber (examples/invocation-subscriber) against the running system:
 * it sees each run's events, decoded with the published schemas, in the order the invocation
 * service recorded them, and its durable consumer goes on where it stopped.
 */
describe('an internal subscriber of invocation.evt.>', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  let token: string;
  let subscription: Subscription | undefined;
  const seen: InvocationEvent[] = [];
  const follow = () =>
    followInvocationEvents({ natsUrl: testNatsUrl(), prefix: system.busPrefix, name: 'audit-example' }, (event) => {
      seen.push(event);
    });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION');
    token = (await issueToken(http, project, ['automation:trigger'])).token;
    await setRateLimit(http, project, 10_000);
  });
  afterAll(async () => {
    await subscription?.stop();
    await system?.stop();
  });

  /** The run's events as the invocation service recorded them, named as on the wire. */
  const recordedTypes = async (invocationId: string) =>
    (await queryDatabase(system.database.url, `SELECT type FROM invocation.invocation_events WHERE invocation_id = $1 ORDER BY sequence`, [invocationId])).map(
      (row) => `invocation.${row.type as string}.v1`,
    );
  const ended = (invocationId: string) => seen.some((event) => event.invocationId === invocationId && /Succeeded|Failed|TimedOut|Cancelled/.test(event.type));
  const trigger = async (mode: 'trigger' | 'trigger-async', orderId: string) => {
    const answer = await http.post<{ invocationId: string }>(
      `/v1/orgs/${project.orgId}/automations/${project.projectId}/${mode}`,
      { event: 'order.created', payload: { orderId, amount: 1 } },
      { bearer: token },
    );
    expect(answer.status).toBe(mode === 'trigger' ? 200 : 202);
    return answer.body.invocationId;
  };

  it("sees every run's events in the recorded order, decoded, on their subjects", async () => {
    subscription = await follow();
    const runs = [await trigger('trigger-async', 'a-1'), await trigger('trigger', 's-1'), await trigger('trigger-async', 'a-2')];
    await eventually('every run to end at the subscriber', async () => (runs.every(ended) ? true : undefined));
    for (const invocationId of runs) {
      const events = seen.filter((event) => event.invocationId === invocationId);
      expect(events.map((event) => event.type)).toEqual(await recordedTypes(invocationId));
      expect(events.map((event) => event.streamSequence)).toEqual([...events.map((event) => event.streamSequence)].sort((x, y) => x - y));
      for (const event of events) {
        expect(event).toMatchObject({ orgId: project.orgId, projectId: project.projectId, subject: eventRegistration(event.type).subject });
        expect(Date.parse(event.occurredAt)).not.toBeNaN();
        expect(event.payload).toEqual(expect.any(Object));
      }
    }
    // Payload fields that hold documents travel as JSON text (`resultJson`, `stepsJson`, ...).
    const succeeded = seen.find((event) => event.invocationId === runs[0] && event.type === 'invocation.InvocationSucceeded.v1')!.payload as { resultJson: string };
    expect(JSON.parse(succeeded.resultJson)).toEqual({ ok: true, orderId: 'a-1' });
  });

  it('a restarted subscriber goes on after the last event it acknowledged', async () => {
    await subscription!.stop();
    const before = seen.length;
    const whileAway = await trigger('trigger-async', 'away-1');
    subscription = await follow();
    await eventually('the run made while away', async () => (ended(whileAway) ? true : undefined));
    const redelivered = seen.slice(before).filter((event) => event.invocationId !== whileAway);
    expect(redelivered).toEqual([]);
    expect(seen.slice(before).map((event) => event.type)).toEqual(await recordedTypes(whileAway));
  });
});
