import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';

/**
 * The invocation and dead-letter services' own metrics (issue 20, item 5), read from their
 * /metrics after real runs: runs by transition from the outbox (exactly once per commit),
 * attempt durations, the outbox backlog, and dead letters by state.
 */
describe('service metrics', () => {
  let system: TestSystem;
  let http: HttpClient;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, deadLetterService]);
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  const scrape = async (service: string) => (await fetch(`${system.url(service)}/metrics`)).text();
  /** The sample of `name` whose labels include every `labels` pair (0 when absent). */
  const sample = (text: string, name: string, labels: Record<string, string> = {}): number => {
    for (const line of text.split('\n')) {
      const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const given = match[2] ?? '';
      if (Object.entries(labels).every(([key, value]) => given.includes(`${key}="${value}"`))) return Number(match[3]);
    }
    return 0;
  };

  it('counts runs by transition, times attempts, shows the outbox backlog and dead letters by state', async () => {
    const succeeding = await createPublishedProject(http, 'AUTOMATION');
    const failing = await createPublishedProject(http, 'AUTOMATION', {
      schemaVersion: 1,
      workflow: {
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 1, backoffSeconds: 1 } },
        start: 'boom',
        nodes: { boom: { type: 'fail', error: 'automation broke' } },
      },
    });
    const before = await scrape('invocation');
    const succeededBefore = sample(before, 'runline_outbox_messages_committed_total', { subject: 'invocation.evt.invocation-succeeded' });
    const failedBefore = sample(before, 'runline_outbox_messages_committed_total', { subject: 'invocation.evt.invocation-failed' });

    for (const [project, count] of [
      [succeeding, 3],
      [failing, 2],
    ] as const) {
      const token = (await issueToken(http, project, ['automation:trigger'])).token;
      const path = `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`;
      for (let i = 0; i < count; i++) {
        expect((await http.post(path, { event: 'order', payload: { orderId: `o-${i}`, amount: 1 } }, { bearer: token })).status).toBe(202);
      }
    }

    const invocation = await eventually('runs ended and counted', async () => {
      const text = await scrape('invocation');
      const succeeded = sample(text, 'runline_outbox_messages_committed_total', { subject: 'invocation.evt.invocation-succeeded' }) - succeededBefore;
      const failed = sample(text, 'runline_outbox_messages_committed_total', { subject: 'invocation.evt.invocation-failed' }) - failedBefore;
      return succeeded === 3 && failed === 2 ? text : undefined;
    });
    expect(sample(invocation, 'runline_outbox_messages_committed_total', { subject: 'invocation.evt.invocation-queued' })).toBeGreaterThanOrEqual(5);
    expect(sample(invocation, 'runline_invocation_run_attempt_duration_seconds_count', { target_type: 'AUTOMATION', status: 'SUCCEEDED' })).toBeGreaterThanOrEqual(3);
    expect(sample(invocation, 'runline_invocation_run_attempt_duration_seconds_count', { target_type: 'AUTOMATION', status: 'FAILED' })).toBeGreaterThanOrEqual(2);
    expect(invocation).toMatch(/^runline_invocation_runs_executing\{[^}]*service="invocation"[^}]*\} \d+$/m);
    expect(invocation).toMatch(/^runline_invocation_runs_waiting_for_slot\{[^}]*\} 0$/m);
    // Every run above was answered, so none executed as its request waited is still unwritten
    // (runs-lifecycle sees it at 1 while a write is held back).
    expect(invocation).toMatch(/^runline_invocation_inline_runs_in_progress\{[^}]*\} 0$/m);
    // Everything committed has gone out by now: nothing waits in the outbox.
    await eventually('the outbox drained', async () => {
      const text = await scrape('invocation');
      return sample(text, 'runline_outbox_unpublished_messages', { service: 'invocation' }) === 0 &&
        /^runline_outbox_oldest_unpublished_age_seconds\{[^}]*\} 0$/m.test(text)
        ? true
        : undefined;
    });

    // Each failed automation run (its retries exhausted) is one unreplayed FLOW dead letter.
    await eventually('dead letters recorded', async () => {
      const text = await scrape('dead-letter');
      return sample(text, 'runline_dead_letters', { target_type: 'FLOW', state: 'unreplayed' }) === 2 ? true : undefined;
    });
  });
});
