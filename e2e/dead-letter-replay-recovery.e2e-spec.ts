import { randomUUID } from 'node:crypto';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { SecretBox } from '@runline/runtime';
import { HttpClient, queryDatabase, startTestSystem, TEST_SECRETS_KEY, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';

/**
 * A replay cut off between its claim (replayedAt set) and its outcome, as a crash leaves it,
 * ends SUCCESS or FAILED: <reason> after a restart, and its event still runs once.
 */
describe('dead-letter replays cut off by a crash', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  let token: string;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);
  const sealed = (body: object) => new SecretBox(TEST_SECRETS_KEY).seal(JSON.stringify(body));

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, deadLetterService], {
      environment: { DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS: '200', DEAD_LETTER_REPLAY_TIMEOUT_MS: '2000' },
    });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'CHATBOT');
    token = (await issueToken(http, project, ['flow:trigger'])).token;
  });
  afterAll(() => system?.stop());

  /** A dead letter whose replay was claimed a minute ago and never finished. */
  async function claimedLetter(body: object): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO dead_letter.dead_letters (id, org_id, project_id, origin_key, source, target_type, trigger_key, run_target, sealed_payload,
                                             failure_reason, attempt_count, replayed_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'crash', 'polling', 'crash', 'FLOW', $5, 'earlier failure', 1, now() - interval '1 minute', now(), now())`,
      [id, project.orgId, project.projectId, `test:${id}`, sealed(body)],
    );
    return id;
  }
  const letter = async (id: string) =>
    (await sql(`SELECT replay_status, replay_invocation_id FROM dead_letter.dead_letters WHERE id = $1`, [id]))[0] as {
      replay_status: string | null;
      replay_invocation_id: string | null;
    };
  /** Runs of the project whose request carried this order id (every run is in the read model). */
  const runsFor = async (orderId: string) =>
    ((await sql(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1 AND document->'requestPayload'->>'orderId' = $2`, [
      project.projectId,
      orderId,
    ]))[0] as { n: number }).n;

  it('cut off before its run was made: the run is made once and the outcome recorded', async () => {
    const id = await claimedLetter({ event: 'order.created', customerId: 'c-1', orderId: 'crash-1' });
    const finished = await eventually('the replay to be finished', async () => ((await letter(id)).replay_status !== null ? letter(id) : undefined));
    expect(finished).toEqual({ replay_status: 'SUCCESS', replay_invocation_id: expect.any(String) });
    expect(await runsFor('crash-1')).toBe(1);
  });

  it('cut off after its run was made: the same run is found, not a second one', async () => {
    const id = await claimedLetter({ event: 'order.created', customerId: 'c-2', orderId: 'crash-2' });
    const first = await eventually('the replay to be finished', async () => ((await letter(id)).replay_status !== null ? letter(id) : undefined));
    // As if the outcome's write had been lost after the run was made.
    await sql(`UPDATE dead_letter.dead_letters SET replay_status = NULL, replay_invocation_id = NULL, replayed_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    const again = await eventually('the replay to be finished again', async () => ((await letter(id)).replay_status !== null ? letter(id) : undefined));
    expect(again).toEqual(first);
    expect(await runsFor('crash-2')).toBe(1);
  });

  it('a replay whose run fails ends FAILED: <reason>', async () => {
    const id = await claimedLetter({ event: 'order.created', orderId: 'crash-3' });
    const finished = await eventually('the replay to be finished', async () => ((await letter(id)).replay_status !== null ? letter(id) : undefined));
    expect(finished.replay_status).toBe('FAILED: Payload is missing required keys: customerId');
    // The token API shows the same.
    const listed = await http.get<{ data: Array<{ id: string; replayStatus: string }> }>(
      `/v1/orgs/${project.orgId}/flows/${project.projectId}/dead-letters?source=crash`,
      { bearer: token },
    );
    expect(listed.body.data.find((row) => row.id === id)?.replayStatus).toBe('FAILED: Payload is missing required keys: customerId');
  });
});
