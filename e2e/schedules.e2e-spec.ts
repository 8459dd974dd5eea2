import { JetStreamBus } from '@runline/bus';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { startService, type RunningService, type ServiceDefinition } from '@runline/runtime';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, testNatsUrl, type TestSystem } from '@runline/testing';
import { createProject, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';

type Json = Record<string, unknown>;
interface LogRow {
  invocationId: string;
  status: string;
  triggerSource: string;
  mode: string;
  scheduledFor: string | null;
  createdAt: string;
}
interface Schedule {
  id: string;
  cron: string | null;
  every: string | null;
  timezone: string;
  enabled: boolean;
  paused: boolean;
  overlap: string;
  catchUp: string;
  startAt: string | null;
  endAt: string | null;
  nextFireTimes: string[];
  lastFire: { scheduledTime: string; invocationId: string; status: string | null } | null;
  skippedCount: number;
}

const DISABLED = 'External API access is disabled for this project';

/** An automation that returns what a fire gave it, with `schedules`; `wait` seconds first when set. */
function scheduledAutomation(schedules: Json[], wait = 0): Json {
  const done = { type: 'return', value: "{ 'event': input.event, 'n': payload.n }" };
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
      start: wait > 0 ? 'pause' : 'done',
      nodes: wait > 0 ? { pause: { type: 'wait', seconds: wait, next: 'done' }, done } : { done },
      schedules,
    },
  };
}

/**
 * Schedule triggers end to end (DESIGN.md section 12): the gateway, the invocation service and
 * TWO scheduler replicas on one database and one NATS, driven over HTTP like the console. Fires
 * come every second (an `every: "1s"` schedule, a cron with seconds), so the test sees many of
 * them in a few seconds, and a doubled fire would show as two runs with one `scheduledFor`.
 */
describe('schedule triggers', () => {
  let system: TestSystem;
  let http: HttpClient;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    // A fire due more than 1.5 s ago was missed (the catch-up case below stops the schedulers for longer).
    // A waiting BUFFER_ONE fire is rechecked only after a minute: it must start when the FireRunEnded of the run before it arrives.
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: { ACCESS_CACHE_TTL_MS: '0', SCHEDULER_MISSED_FIRE_AFTER_MS: '1500', SCHEDULER_BUFFER_RECHECK_MS: '60000' },
    });
    http = new HttpClient(system.url('gateway'));
    // A second scheduler replica: its own bus connection, the same environment, database and prefix.
    await startSchedulerReplica('scheduler-2');
  }, 120_000);
  afterAll(async () => {
    for (const replica of [...extraReplicas, ...otherReplicas]) await replica.service.stop().catch(() => undefined);
    for (const replica of [...extraReplicas, ...otherReplicas]) await replica.bus.close().catch(() => undefined);
    await system?.stop();
  });

  const extraReplicas: Array<{ bus: JetStreamBus; service: RunningService }> = [];
  /** Another scheduler replica in this process: its own bus connection, the system's environment, database and prefix. */
  function startSchedulerReplica(name: string): Promise<{ bus: JetStreamBus; service: RunningService }> {
    return startReplica(schedulerService, name, extraReplicas);
  }
  /** Scheduler replicas go to `extraReplicas` (the last test stops them); others to `otherReplicas`. */
  const otherReplicas: Array<{ bus: JetStreamBus; service: RunningService }> = [];
  async function startReplica(definition: ServiceDefinition, name: string, list = otherReplicas): Promise<{ bus: JetStreamBus; service: RunningService }> {
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: system.busPrefix, name });
    const service = await startService(definition, {
      databaseUrl: system.database.url,
      bus,
      httpPort: 0,
      environment: system.environment,
      logger: createLogger({ service: name, level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    });
    list.push({ bus, service });
    return { bus, service };
  }

  const schedulesPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/schedules`;
  const listSchedules = async (project: ProjectFixture) => {
    const answer = await http.get<{ data: Schedule[] }>(schedulesPath(project), { bearer: project.ownerJwt });
    expect(answer.status).toBe(200);
    return answer.body.data;
  };
  const scheduleRuns = async (project: ProjectFixture): Promise<LogRow[]> => {
    const answer = await http.get<{ data: LogRow[] }>(`/v1/orgs/${project.orgId}/external-invocations/logs?projectId=${project.projectId}&triggerSource=SCHEDULE&limit=200`, {
      bearer: project.ownerJwt,
    });
    expect(answer.status).toBe(200);
    return answer.body.data;
  };
  const invocation = async (project: ProjectFixture, id: string) => (await http.get<Json>(`/v1/orgs/${project.orgId}/external-invocations/${id}`, { bearer: project.ownerJwt })).body;
  /** The runs of schedule `id`, read in full, oldest fire first. */
  const runsOf = async (project: ProjectFixture, id: string) => {
    const documents = await Promise.all((await scheduleRuns(project)).map((row) => invocation(project, row.invocationId)));
    return documents.filter((document) => document.schedulerJobName === `schedule:${id}`).sort((a, b) => String(a.scheduledFor).localeCompare(String(b.scheduledFor)));
  };
  const publish = async (definition: Json, project?: ProjectFixture) => {
    const target = project ?? (await createProject(http, 'AUTOMATION'));
    await publishDefinition(http, target, definition);
    return target;
  };

  describe('an automation with an every-second schedule and a cron with seconds', () => {
    let project: ProjectFixture;
    let publishedAt: number;

    beforeAll(async () => {
      project = await createProject(http, 'AUTOMATION');
      publishedAt = Date.now();
      await publish(
        scheduledAutomation([
          { id: 'tick', every: '1s', payload: { n: 1 } },
          { id: 'even-seconds', cron: '*/2 * * * * *', timezone: 'Europe/Berlin', payload: { n: 2 } },
        ]),
        project,
      );
    });

    it('fires runs with trigger source SCHEDULE and the fire in its fields, each fire once across two replicas', async () => {
      const ticks = await eventually('five tick runs, ended', async () => {
        const runs = await runsOf(project, 'tick');
        return runs.length >= 5 && runs.slice(0, 5).every((run) => run.status === 'SUCCEEDED') ? runs : undefined;
      }, 20_000);
      for (const run of ticks.slice(0, 5)) {
        expect(run).toMatchObject({ mode: 'ASYNC', targetType: 'AUTOMATION', triggerSource: 'SCHEDULE', status: 'SUCCEEDED', result: { event: 'schedule', n: 1 } });
        expect(run.trace).toMatchObject({ schedule: { id: 'tick', scheduledTime: run.scheduledFor } });
        // An interval counts from the publish: whole seconds after it.
        expect(Date.parse(String(run.scheduledFor))).toBeGreaterThan(publishedAt);
      }
      const scheduledTimes = ticks.map((run) => run.scheduledFor);
      expect(new Set(scheduledTimes).size).toBe(scheduledTimes.length);
      const gaps = ticks.slice(1).map((run, index) => Date.parse(String(run.scheduledFor)) - Date.parse(String(ticks[index]!.scheduledFor)));
      expect(gaps.every((gap) => gap % 1000 === 0 && gap >= 1000)).toBe(true);

      const evens = await eventually('two cron runs', async () => {
        const runs = await runsOf(project, 'even-seconds');
        return runs.length >= 2 ? runs : undefined;
      }, 10_000);
      for (const run of evens) {
        const scheduledFor = new Date(String(run.scheduledFor));
        expect(scheduledFor.getUTCMilliseconds()).toBe(0);
        expect(scheduledFor.getUTCSeconds() % 2).toBe(0);
        expect(run).toMatchObject({ triggerSource: 'SCHEDULE', schedulerJobName: 'schedule:even-seconds' });
      }
      expect(new Set(evens.map((run) => run.scheduledFor)).size).toBe(evens.length);
      // The fires' rows: one per (schedule, nominal time), whichever replica fired it.
      const [fires] = (await sql(`SELECT count(*)::int AS n, count(DISTINCT (schedule_id, scheduled_time))::int AS distinct_n FROM scheduler.schedule_fires WHERE project_id = $1`, [
        project.projectId,
      ])) as Array<{ n: number; distinct_n: number }>;
      expect(fires!.n).toBe(fires!.distinct_n);
    }, 40_000);

    it('the project’s invocation health has each schedule’s runs and lateness', async () => {
      const health = await http.get<{ schedules?: Array<{ id: string; fires: number; succeeded: number; latenessP99Ms: number | null }> }>(
        `/v1/orgs/${project.orgId}/external-invocations/metrics?projectId=${project.projectId}`,
        { bearer: project.ownerJwt },
      );
      expect(health.status).toBe(200);
      const tick = health.body.schedules?.find((entry) => entry.id === 'tick');
      expect(tick).toMatchObject({ fires: expect.any(Number), succeeded: expect.any(Number) });
      expect(tick!.fires).toBeGreaterThanOrEqual(5);
      expect(tick!.latenessP99Ms).toEqual(expect.any(Number));
    });

    it('lists the schedules with their next fires, latest fire and nulls for what they do not set', async () => {
      const [tick, even] = await listSchedules(project);
      expect(tick).toMatchObject({ id: 'tick', cron: null, every: '1s', timezone: 'UTC', enabled: true, paused: false, overlap: 'SKIP', catchUp: 'LATEST', startAt: null, endAt: null, skippedCount: 0 });
      expect(even).toMatchObject({ id: 'even-seconds', cron: '*/2 * * * * *', every: null, timezone: 'Europe/Berlin' });
      expect(tick!.nextFireTimes).toHaveLength(5);
      expect(tick!.nextFireTimes.every((time) => time.endsWith('Z') && Date.parse(time) > Date.now() - 1000)).toBe(true);
      expect(tick!.lastFire).toMatchObject({ invocationId: expect.any(String), scheduledTime: expect.any(String) });
    });

    it('pause drops fires until resume; resume catches nothing up', async () => {
      const paused = await http.post<Schedule>(`${schedulesPath(project)}/tick/pause`, {}, { bearer: project.ownerJwt });
      expect(paused.status).toBe(200);
      expect(paused.body).toMatchObject({ id: 'tick', paused: true });
      expect(paused.body.nextFireTimes).toHaveLength(5);
      const pausedAt = Date.now();
      await sleep(2500);
      const resumed = await http.post<Schedule>(`${schedulesPath(project)}/tick/resume`, {}, { bearer: project.ownerJwt });
      expect(resumed.status).toBe(200);
      expect(resumed.body.paused).toBe(false);
      const resumedAt = Date.now();
      const afterPause = (await runsOf(project, 'tick')).filter((run) => Date.parse(String(run.scheduledFor)) > pausedAt + 200);
      expect(afterPause.filter((run) => Date.parse(String(run.scheduledFor)) < resumedAt - 200)).toEqual([]);
      await eventually('a tick after the resume', async () => ((await runsOf(project, 'tick')).some((run) => Date.parse(String(run.scheduledFor)) > resumedAt) ? true : undefined), 5000);
    }, 20_000);

    it('trigger starts one run now; backfill starts one per fire time and refuses more than 1,000', async () => {
      const triggered = await http.post<{ invocationId: string }>(`${schedulesPath(project)}/even-seconds/trigger`, {}, { bearer: project.ownerJwt });
      expect(triggered.status).toBe(202);
      const run = await eventually('the triggered run, ended', async () => {
        const document = await invocation(project, triggered.body.invocationId);
        return document.status === 'SUCCEEDED' ? document : undefined;
      });
      expect(run).toMatchObject({ triggerSource: 'SCHEDULE', schedulerJobName: 'schedule:even-seconds', mode: 'ASYNC', result: { event: 'schedule', n: 2 } });

      // Fire times of `tick` in a window where it was paused had no run: the backfill starts them.
      const from = new Date(Math.ceil((Date.now() - 60_000) / 1000) * 1000);
      const before = (await runsOf(project, 'tick')).length;
      const backfill = await http.post<{ count: number }>(`${schedulesPath(project)}/even-seconds/backfill`, { from: from.toISOString(), to: new Date(from.getTime() + 10_000).toISOString() }, { bearer: project.ownerJwt });
      expect(backfill.status).toBe(202);
      expect(backfill.body.count).toBe(5);
      await eventually('the backfilled runs', async () => {
        const runs = await runsOf(project, 'even-seconds');
        const backfilled = runs.filter((candidate) => Date.parse(String(candidate.scheduledFor)) >= from.getTime() && Date.parse(String(candidate.scheduledFor)) < from.getTime() + 10_000);
        return backfilled.length === 5 ? true : undefined;
      });
      expect((await runsOf(project, 'tick')).length).toBeGreaterThanOrEqual(before);

      const tooMany = await http.post<{ error: string }>(
        `${schedulesPath(project)}/even-seconds/backfill`,
        { from: new Date(Date.now() - 3 * 3600_000).toISOString(), to: new Date().toISOString() },
        { bearer: project.ownerJwt },
      );
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toMatch(/at most 1000 runs/);
    }, 30_000);

    it('any member reads; a change needs edit access; a non-member gets 404', async () => {
      const viewer = `viewer-${process.pid}-${Date.now()}`;
      const added = await http.post(`/v1/orgs/${project.orgId}/members`, { userId: viewer, role: 'VIEWER' }, { bearer: project.ownerJwt });
      expect(added.status).toBe(201);
      expect((await http.get(schedulesPath(project), { bearer: consoleJwt(viewer) })).status).toBe(200);
      const refused = await http.post<{ error: string }>(`${schedulesPath(project)}/even-seconds/pause`, {}, { bearer: consoleJwt(viewer) });
      expect(refused.status).toBe(403);
      expect((await http.get(schedulesPath(project), { bearer: consoleJwt(`stranger-${Date.now()}`) })).status).toBe(404);
      expect((await http.post(`${schedulesPath(project)}/even-seconds/trigger`, {}, { bearer: consoleJwt(`stranger-${Date.now()}`) })).status).toBe(404);
    });

    it('an unknown schedule is 404 Schedule not found', async () => {
      for (const action of ['pause', 'resume', 'trigger']) {
        const answer = await http.post<{ error: string }>(`${schedulesPath(project)}/nope/${action}`, {}, { bearer: project.ownerJwt });
        expect([answer.status, answer.body.error]).toEqual([404, 'Schedule not found']);
      }
    });

    it('a re-publish that removes a schedule stops it from its answer on (section 8); an unchanged one keeps its times', async () => {
      const anchorOf = async () => ((await sql(`SELECT anchor_at FROM scheduler.schedules WHERE project_id = $1 AND schedule_id = 'even-seconds'`, [project.projectId])) as Array<{ anchor_at: Date }>)[0]?.anchor_at.getTime();
      const anchorBefore = await anchorOf();
      await publish(scheduledAutomation([{ id: 'even-seconds', cron: '*/2 * * * * *', timezone: 'Europe/Berlin', payload: { n: 2 } }]), project);
      const answeredAt = Date.now();
      expect((await listSchedules(project)).map((schedule) => schedule.id)).toEqual(['even-seconds']);
      expect(await anchorOf()).toBe(anchorBefore);
      await sleep(2500);
      const late = (await scheduleRuns(project)).filter((row) => Date.parse(row.createdAt) > answeredAt);
      const lateDocuments = await Promise.all(late.map((row) => invocation(project, row.invocationId)));
      expect(lateDocuments.filter((document) => document.schedulerJobName === 'schedule:tick')).toEqual([]);
      expect(lateDocuments.some((document) => document.schedulerJobName === 'schedule:even-seconds')).toBe(true);
    }, 20_000);
  });

  it('with the master switch off a fire records a FAILED run', async () => {
    const project = await createProject(http, 'AUTOMATION');
    const settings = await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { externalApiEnabled: false }, { bearer: project.ownerJwt });
    expect(settings.status).toBe(200);
    await publish(scheduledAutomation([{ id: 'tick', every: '1s' }]), project);
    const failed = await eventually('a failed fire', async () => (await runsOf(project, 'tick')).find((run) => run.status === 'FAILED'), 10_000);
    expect(failed).toMatchObject({ triggerSource: 'SCHEDULE', errorMessage: DISABLED, schedulerJobName: 'schedule:tick' });
  }, 20_000);

  it('SKIP: fires while the previous run is not final are skipped and counted', async () => {
    const project = await publish(scheduledAutomation([{ id: 'slow', every: '1s', overlap: 'SKIP' }], 4));
    const skipped = await eventually('two skipped fires', async () => {
      const [slow] = await listSchedules(project);
      return slow && slow.skippedCount >= 2 ? slow : undefined;
    }, 10_000);
    expect(skipped.lastFire).not.toBeNull();
    // One run waits in its Wait node; the fires during it were skipped, not started.
    const runs = await runsOf(project, 'slow');
    expect(runs.length).toBeLessThanOrEqual(2);
    expect(['SUSPENDED', 'SUCCEEDED']).toContain(runs[0]!.status);
  }, 20_000);
  it('BUFFER_ONE: the fire that waited behind a run starts as soon as that run ends, which its fire records', async () => {
    // Every 4 s, each run waiting 5 s: the fire at +4 s waits behind the first run and starts when it ends at +5 s, not at the next fire (+8 s).
    const project = await publish(scheduledAutomation([{ id: 'buffered', every: '4s', overlap: 'BUFFER_ONE' }], 5));
    const [first, second] = await eventually('the buffered fire’s run', async () => {
      const runs = await runsOf(project, 'buffered');
      return runs.length >= 2 && runs[0]!.status === 'SUCCEEDED' ? runs : undefined;
    }, 20_000);
    expect(Date.parse(String(second!.scheduledFor)) - Date.parse(String(first!.scheduledFor))).toBe(4000);
    const startedAfterEnd = Date.parse(String(second!.createdAt)) - Date.parse(String(first!.completedAt));
    expect(startedAfterEnd).toBeGreaterThanOrEqual(0);
    expect(startedAfterEnd).toBeLessThan(1000);
    const [fire] = (await sql(`SELECT run_status FROM scheduler.schedule_fires WHERE invocation_id = $1`, [first!.invocationId])) as Array<{ run_status: string }>;
    expect(fire?.run_status).toBe('SUCCEEDED');
  }, 30_000);
  it('a 600-fire backfill starts each fire once, oldest first, and a publish meanwhile is answered at once', async () => {
    const project = await publish(scheduledAutomation([{ id: 'minutely', every: '1m', payload: { n: 1 } }]));
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const from = new Date(to.getTime() - 600 * 60_000);
    const backfill = await http.post<{ count: number }>(`${schedulesPath(project)}/minutely/backfill`, { from: from.toISOString(), to: to.toISOString() }, { bearer: project.ownerJwt });
    expect([backfill.status, backfill.body.count]).toEqual([202, 600]);
    await eventually('the backfill under way', async () => {
      const [row] = (await sql(`SELECT count(*)::int AS n FROM scheduler.schedule_fires WHERE project_id = $1 AND kind = 'BACKFILL' AND status <> 'PENDING'`, [project.projectId])) as Array<{ n: number }>;
      return row!.n > 0 ? true : undefined;
    }, 10_000);
    // The publish waits for the schedule's row, which a batch of backfill fires holds while it starts them.
    const publishing = Date.now();
    await publishDefinition(http, project, scheduledAutomation([{ id: 'minutely', every: '1m', payload: { n: 1 } }, { id: 'hourly', every: '1h' }]));
    expect(Date.now() - publishing).toBeLessThan(1500);
    const started = await eventually('every backfilled fire started', async () => {
      const rows = (await sql(
        `SELECT scheduled_time, started_at, invocation_id FROM scheduler.schedule_fires WHERE project_id = $1 AND schedule_id = 'minutely' AND kind = 'BACKFILL' ORDER BY scheduled_time`,
        [project.projectId],
      )) as Array<{ scheduled_time: Date; started_at: Date | null; invocation_id: string | null }>;
      return rows.length === 600 && rows.every((row) => row.invocation_id !== null) ? rows : undefined;
    }, 60_000);
    expect(new Set(started.map((row) => row.invocation_id)).size).toBe(600);
    // Oldest first (DESIGN section 12), across batches, both replicas and the publish: a fire's
    // start is sent only after the one before it was answered, so in fire order neither the
    // starts' times nor the runs' creation times (the invocation service's, what the API shows)
    // go back, and each run was asked for no later than the next fire's start was sent.
    const order = (await sql(
      `SELECT f.scheduled_time, f.started_at, i.created_at FROM scheduler.schedule_fires f JOIN invocation.invocations i ON i.id = f.invocation_id
        WHERE f.project_id = $1 AND f.schedule_id = 'minutely' AND f.kind = 'BACKFILL' ORDER BY f.scheduled_time`,
      [project.projectId],
    )) as Array<{ scheduled_time: Date; started_at: Date; created_at: Date }>;
    expect(order).toHaveLength(600);
    const backwards = order.filter((row, index) => {
      const previous = order[index - 1];
      return previous !== undefined && (row.started_at < previous.started_at || row.created_at < previous.created_at || row.started_at < previous.created_at);
    });
    expect(backwards).toEqual([]);
  }, 90_000);
  it('a fire whose start the invocation service does not confirm is sent again with its key: none lost, none twice, while the service is down for 3 s', async () => {
    const project = await publish(scheduledAutomation([{ id: 'steady', every: '1s', overlap: 'ALLOW', catchUp: 'NONE' }]));
    await eventually('a first fire', async () => ((await runsOf(project, 'steady')).length > 0 ? true : undefined), 10_000);
    await system.services.get('invocation')!.stop();
    const stoppedAt = Date.now();
    await sleep(3000);
    const restartedAt = Date.now();
    await startReplica(invocationService, 'invocation-2');
    // Every fire due from before the stop to after the restart has a run, once. An `every`
    // schedule's grid is anchored where it came into force, so the fires are a second apart
    // but not on whole seconds: the runs' times must step by exactly one second, no gap.
    const to = restartedAt + 2000;
    const fireTimesUpTo = (runs: Json[]) => [...new Set(runs.map((run) => Date.parse(String(run.scheduledFor))))].sort((a, b) => a - b).filter((time) => time <= to);
    const withoutGap = (times: number[]) => times.every((time, index) => index === 0 || time - times[index - 1]! === 1000);
    const runs = await eventually(
      'a run for every fire due across the outage',
      async () => {
        const all = await runsOf(project, 'steady');
        const times = fireTimesUpTo(all);
        return times.length > 0 && times.at(-1)! > to - 1000 && withoutGap(times) ? all : undefined;
      },
      20_000,
    );
    expect(fireTimesUpTo(runs)[0]).toBeLessThan(stoppedAt);
    expect(new Set(runs.map((run) => run.scheduledFor)).size).toBe(runs.length);
    const notStarted = (await sql(`SELECT count(*)::int AS n FROM scheduler.schedule_fires WHERE project_id = $1 AND status = 'NOT_STARTED'`, [project.projectId])) as Array<{ n: number }>;
    expect(notStarted[0]!.n).toBe(0);
    // The fires due while it was down started once it was back.
    const late = runs.filter((run) => Date.parse(String(run.scheduledFor)) > stoppedAt + 500 && Date.parse(String(run.scheduledFor)) < restartedAt - 500);
    expect(late.length).toBeGreaterThanOrEqual(2);
    for (const run of late) expect(Date.parse(String(run.createdAt))).toBeGreaterThanOrEqual(restartedAt - 100);
  }, 40_000);
  // Last: it stops every scheduler replica for a while.
  it('catch-up after an outage: NONE drops the missed fires, LATEST runs the latest once, ALL runs each', async () => {
    const project = await publish(
      scheduledAutomation([
        { id: 'none', every: '1s', catchUp: 'NONE', overlap: 'ALLOW' },
        { id: 'latest', every: '1s', catchUp: 'LATEST', overlap: 'ALLOW' },
        { id: 'all', every: '1s', catchUp: 'ALL', overlap: 'ALLOW' },
      ]),
    );
    await eventually('a first fire of each', async () => {
      const jobs = new Set((await Promise.all((await scheduleRuns(project)).map((row) => invocation(project, row.invocationId)))).map((run) => run.schedulerJobName));
      return jobs.size === 3 ? true : undefined;
    }, 10_000);
    await system.services.get('scheduler')!.stop();
    for (const replica of extraReplicas.splice(0)) {
      await replica.service.stop();
      await replica.bus.close();
    }
    const stoppedAt = Date.now();
    await sleep(4000);
    const restartedAt = Date.now();
    await startSchedulerReplica('scheduler-3');
    const caughtUp = async (id: string) =>
      ((await sql(`SELECT scheduled_time FROM scheduler.schedule_fires WHERE project_id = $1 AND schedule_id = $2 AND kind = 'CATCH_UP' ORDER BY scheduled_time`, [project.projectId, id])) as Array<{
        scheduled_time: Date;
      }>).map((row) => row.scheduled_time.getTime());
    // Fires certainly due while no scheduler ran (a margin after the stop).
    const inGap = async (id: string) =>
      (await runsOf(project, id)).filter((run) => Date.parse(String(run.scheduledFor)) > stoppedAt + 600 && Date.parse(String(run.scheduledFor)) <= restartedAt);
    const missed = Math.floor((restartedAt - (stoppedAt + 600)) / 1000);
    await eventually('the ALL catch-up started', async () => ((await inGap('all')).length >= missed ? true : undefined), 10_000);
    await sleep(500);
    expect(await caughtUp('none')).toEqual([]);
    expect(await inGap('none')).toEqual([]);
    const latest = await caughtUp('latest');
    expect(latest).toHaveLength(1);
    expect(latest[0]).toBeGreaterThan(restartedAt - 1000);
    expect((await inGap('latest')).length).toBeLessThanOrEqual(1);
    expect((await caughtUp('all')).length).toBeGreaterThanOrEqual(missed);
    // Each fire once, the caught-up ones included.
    const all = await runsOf(project, 'all');
    expect(new Set(all.map((run) => run.scheduledFor)).size).toBe(all.length);
  }, 40_000);
});
