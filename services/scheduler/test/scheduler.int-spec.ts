import { create, EVENT_TYPES, JobChangeOutcome, newEnvelope, ScheduleJobSchema, unpackPayloadAs } from '@runline/contracts';
import { invocationOf, ORG_ID, PROJECT_ID, reportLatency, SchedulerHarness, sleepUntil, until } from './scheduler-harness.js';

const LEAD_MS = 10;
/**
 * The sweep interval of the replicas whose jobs must be fired by the armed timer: the longest
 * allowed, so after the pass at start no sweep runs while the tests do, and every job that
 * fires was fired by the timer. How late the timer fires (median, tail) depends on the
 * machine's speed and load: `npm run bench:scheduling` measures it; these tests print their
 * figures with REPORT_LATENCY=1 and do not assert them.
 */
const NO_SWEEP_MS = '600000';

let sequence = 0;
const jobName = (label: string) => `${label}-${++sequence}-${Date.now().toString(36)}`;

/**
 * The scheduler on real PostgreSQL and NATS. No sweep runs after the start here, so every job
 * that fires was fired by the armed timer.
 */
describe('scheduler (fire lead 10 ms)', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_FIRE_LEAD_MS: String(LEAD_MS), SCHEDULER_SWEEP_INTERVAL_MS: NO_SWEEP_MS });
    await harness.startReplica();
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  /** Waits until the scheduler has the job (its ScheduleJob went through the work queue). */
  const stored = (name: string) => until(async () => (await harness.rows([name])).has(name), 5000, `job ${name} to be stored`);

  /**
   * Waits until the scheduler has run a firing pass for the time `at`: a sentinel job due then
   * has fired. A pass claims every waiting job due by its horizon, earliest first, so a job due
   * at or before `at` that was still claimable would have been fired by that pass or an earlier
   * one. Used instead of sleeping past a due time to show that a job did not fire.
   */
  const passedTime = async (at: number) => {
    const sentinel = jobName('sentinel');
    await harness.schedule(sentinel, at);
    await until(() => harness.firedCount(sentinel) === 1, 5000, `the sentinel job due at ${new Date(at).toISOString()} to fire`);
  };
  /** Fired and cancelled events the scheduler emitted for `name` (its outbox; final once committed). */
  const emitted = async (name: string) => ({
    fired: (await harness.emitted('fired', [name])).get(name),
    cancelled: (await harness.emitted('cancelled', [name])).get(name),
  });

  it('fires each job once, at its time, never before due − lead', async () => {
    const start = Date.now() + 400;
    const names = Array.from({ length: 20 }, (_, i) => ({ name: jobName('once'), dueAt: start + i * 50 }));
    for (const { name, dueAt } of names) await harness.schedule(name, dueAt);
    await until(() => names.every(({ name }) => harness.firedCount(name) === 1), 5000, 'every job to fire');
    // Each job was emitted once: its row is FIRED, which no later pass can claim again.
    const emittedFired = await harness.emitted('fired', names.map(({ name }) => name));

    const rows = await harness.rows(names.map(({ name }) => name));
    for (const { name, dueAt } of names) {
      expect(harness.firedCount(name)).toBe(1);
      expect(emittedFired.get(name)).toBe(1);
      const [event] = harness.fired.get(name)!;
      expect(event!.dueAt).toBe(dueAt);
      expect(event!.envelope).toMatchObject({ orgId: ORG_ID, projectId: PROJECT_ID, invocationId: invocationOf(name) });
      const row = rows.get(name)!;
      expect(row.status).toBe('FIRED');
      expect(row.firedAt).toBe(event!.firedAt);
      expect(row.firedAt! - dueAt).toBeGreaterThanOrEqual(-LEAD_MS);
    }
    reportLatency('lead 10, fired_at - due_at', names.map(({ name }) => harness.fired.get(name)![0]!.firedAt - harness.fired.get(name)![0]!.dueAt));
    reportLatency('lead 10, received - due_at', names.map(({ name }) => harness.fired.get(name)![0]!.receivedAt - harness.fired.get(name)![0]!.dueAt));
  });

  it('is woken early by a sooner job that arrives after a later one', async () => {
    const later = jobName('later');
    const sooner = jobName('sooner');
    const now = Date.now();
    await harness.schedule(later, now + 4000);
    await stored(later);
    await harness.schedule(sooner, now + 600);
    await until(() => harness.firedCount(sooner) === 1, 3000, 'the sooner job to fire');
    const [event] = harness.fired.get(sooner)!;
    expect(event!.firedAt - event!.dueAt).toBeGreaterThanOrEqual(-LEAD_MS);
    // Fired for its own time, well before the later job's: the timer was re-armed for it.
    expect(event!.firedAt).toBeLessThan(now + 4000 - LEAD_MS);
    expect(harness.firedCount(later)).toBe(0);
    await until(() => harness.firedCount(later) === 1, 6000, 'the later job to fire');
    const [laterEvent] = harness.fired.get(later)!;
    expect(laterEvent!.firedAt - laterEvent!.dueAt).toBeGreaterThanOrEqual(-LEAD_MS);
  });

  it('fires a job once however often its ScheduleJob is delivered', async () => {
    const name = jobName('redelivered');
    const dueAt = Date.now() + 700;
    const envelope = harness.scheduleJobEnvelope(name, dueAt);
    await harness.send(envelope);
    // The same envelope again under other bus ids (the stream's dedupe does not see them): the inbox does.
    await harness.send(envelope, `${envelope.id}-again-1`);
    await harness.send(envelope, `${envelope.id}-again-2`);
    // Another ScheduleJob for the same name, with another time: the job keeps its first time.
    const other = harness.scheduleJobEnvelope(name, dueAt - 400);
    await harness.send(other);
    await until(() => harness.firedCount(name) === 1, 3000, 'the job to fire');
    // Every delivery was handled (the copies of the first envelope fall to the inbox with it).
    await until(async () => (await harness.handled(envelope.id)) && (await harness.handled(other.id)), 3000, 'both ScheduleJobs to be handled');
    expect(await emitted(name)).toEqual({ fired: 1, cancelled: 0 });
    expect(harness.firedCount(name)).toBe(1);
    expect(harness.fired.get(name)![0]!.dueAt).toBe(dueAt);
    expect(harness.fired.get(name)![0]!.firedAt).toBeGreaterThanOrEqual(dueAt - LEAD_MS);
  });

  it('cancels a waiting job: CHANGED, an event, and it never fires', async () => {
    const name = jobName('cancel');
    const dueAt = Date.now() + 800;
    await harness.schedule(name, dueAt);
    await stored(name);
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.CHANGED);
    await until(() => harness.cancelled.get(name) === 1, 3000, 'ScheduledJobCancelled');
    await passedTime(dueAt);
    expect(harness.firedCount(name)).toBe(0);
    expect(await emitted(name)).toEqual({ fired: 0, cancelled: 1 });
    expect((await harness.rows([name])).get(name)?.status).toBe('CANCELLED');
  });

  it('answers ALREADY_FIRED to a cancel after the job fired', async () => {
    const name = jobName('cancel-late');
    await harness.schedule(name, Date.now() + 200);
    await until(() => harness.firedCount(name) === 1, 3000, 'the job to fire');
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.ALREADY_FIRED);
    expect((await harness.rows([name])).get(name)?.status).toBe('FIRED');
  });

  it('answers ALREADY_CANCELLED to a second cancel', async () => {
    const name = jobName('cancel-twice');
    await harness.schedule(name, Date.now() + 5000);
    await stored(name);
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.CHANGED);
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.ALREADY_CANCELLED);
    // Both cancels committed before they answered: one event in the outbox, and it arrives once.
    expect(await emitted(name)).toEqual({ fired: 0, cancelled: 1 });
    await until(() => harness.cancelled.get(name) === 1, 3000, 'ScheduledJobCancelled');
    expect(harness.cancelled.get(name)).toBe(1);
  });

  it('keeps a cancel that came before the ScheduleJob (tombstone): the late ScheduleJob is ignored', async () => {
    const name = jobName('tombstone');
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.CHANGED);
    const dueAt = Date.now() + 300;
    const late = harness.scheduleJobEnvelope(name, dueAt);
    await harness.send(late);
    // The ScheduleJob was handled (the inbox has it), and the job's time passes.
    await until(() => harness.handled(late.id), 3000, 'the late ScheduleJob');
    await passedTime(dueAt);
    expect(harness.firedCount(name)).toBe(0);
    expect(await emitted(name)).toEqual({ fired: 0, cancelled: 1 });
    const [row] = await harness.query('SELECT status, due_at FROM scheduler.scheduled_jobs WHERE name = $1', [name]);
    expect(row).toEqual({ status: 'CANCELLED', due_at: null });
    await expect(harness.cancel(name)).resolves.toBe(JobChangeOutcome.ALREADY_CANCELLED);
  });

  it('moves a job to a later time: it fires then, and not at the old time', async () => {
    const name = jobName('later-move');
    const oldDue = Date.now() + 600;
    await harness.schedule(name, oldDue);
    await stored(name);
    const newDue = oldDue + 1200;
    await expect(harness.reschedule(name, newDue)).resolves.toBe(JobChangeOutcome.CHANGED);
    await passedTime(oldDue);
    expect(harness.firedCount(name)).toBe(0);
    expect((await emitted(name)).fired).toBe(0);
    await until(() => harness.firedCount(name) === 1, 3000, 'the moved job to fire');
    const [event] = harness.fired.get(name)!;
    expect(event!.dueAt).toBe(newDue);
    expect(event!.firedAt).toBeGreaterThanOrEqual(newDue - LEAD_MS);
    expect(harness.rescheduled.get(name)).toEqual([newDue]);
  });

  it('moves a job to a sooner time and re-arms for it', async () => {
    const name = jobName('sooner-move');
    const oldDue = Date.now() + 5000;
    await harness.schedule(name, oldDue);
    await stored(name);
    const newDue = Date.now() + 400;
    await expect(harness.reschedule(name, newDue)).resolves.toBe(JobChangeOutcome.CHANGED);
    await until(() => harness.firedCount(name) === 1, 3000, 'the moved job to fire');
    const [event] = harness.fired.get(name)!;
    expect(event!.dueAt).toBe(newDue);
    expect(event!.firedAt).toBeGreaterThanOrEqual(newDue - LEAD_MS);
    // Fired for the new time, long before the old one: the timer was re-armed for it.
    expect(event!.firedAt).toBeLessThan(oldDue - LEAD_MS);
  });

  it('answers ALREADY_FIRED and ALREADY_CANCELLED to late reschedules', async () => {
    const firedJob = jobName('move-fired');
    await harness.schedule(firedJob, Date.now() + 100);
    await until(() => harness.firedCount(firedJob) === 1, 3000, 'the job to fire');
    await expect(harness.reschedule(firedJob, Date.now() + 1000)).resolves.toBe(JobChangeOutcome.ALREADY_FIRED);

    const cancelledJob = jobName('move-cancelled');
    await expect(harness.cancel(cancelledJob)).resolves.toBe(JobChangeOutcome.CHANGED);
    const refusedDue = Date.now() + 200;
    await expect(harness.reschedule(cancelledJob, refusedDue)).resolves.toBe(JobChangeOutcome.ALREADY_CANCELLED);
    await passedTime(refusedDue);
    expect(harness.firedCount(firedJob)).toBe(1);
    expect(harness.firedCount(cancelledJob)).toBe(0);
    expect(await emitted(firedJob)).toEqual({ fired: 1, cancelled: 0 });
    expect(await emitted(cancelledJob)).toEqual({ fired: 0, cancelled: 1 });
  });

  it('records a reschedule that came before the ScheduleJob, at the new time', async () => {
    const name = jobName('move-first');
    const newDue = Date.now() + 900;
    await expect(harness.reschedule(name, newDue)).resolves.toBe(JobChangeOutcome.CHANGED);
    const late = harness.scheduleJobEnvelope(name, Date.now() + 200);
    await harness.send(late);
    await until(() => harness.firedCount(name) === 1, 3000, 'the job to fire');
    expect(harness.fired.get(name)![0]!.dueAt).toBe(newDue);
    expect(harness.fired.get(name)![0]!.firedAt).toBeGreaterThanOrEqual(newDue - LEAD_MS);
    await until(() => harness.handled(late.id), 3000, 'the late ScheduleJob');
    expect((await emitted(name)).fired).toBe(1);
    expect(harness.firedCount(name)).toBe(1);
  });

  it('refuses malformed requests and commands', async () => {
    await expect(harness.cancel('')).rejects.toThrow(/needs a name/);
    await expect(harness.reschedule('', Date.now())).rejects.toThrow(/needs a name/);
    await expect(harness.cancel(jobName('bad-id'), { invocationId: 'run-1' })).rejects.toThrow(/invocationId must be a UUID/);
    await expect(harness.cancel(jobName('bad-org'), { orgId: '' })).rejects.toThrow(/orgId must be a UUID/);
    // A ScheduleJob without a due time can never be handled: it is dropped, not retried.
    const name = jobName('no-time');
    const envelope = harness.scheduleJobEnvelope(name, Date.now());
    const broken = newEnvelope({
      type: EVENT_TYPES.SCHEDULE_JOB,
      payload: create(ScheduleJobSchema, { ...unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULE_JOB), dueAt: undefined }),
      orgId: ORG_ID,
    });
    await harness.send(broken);
    const later = jobName('after-broken');
    await harness.schedule(later, Date.now() + 100);
    await until(() => harness.firedCount(later) === 1, 3000, 'the job sent after the broken one to fire');
    expect((await harness.rows([name])).size).toBe(0);
  });

  it('settles every cancel racing with the firing either way, never both', async () => {
    // Stored an hour ahead (no race with the clock however long that takes), then moved in the
    // table to 5 ms apart from `base`; a job due just before them wakes the timer, and each pass
    // arms it for the next due time it reads from the table.
    const far = Date.now() + 3_600_000;
    const names = Array.from({ length: 200 }, () => jobName('race'));
    for (const [i, name] of names.entries()) await harness.schedule(name, far + i);
    await until(async () => (await harness.rows(names)).size === names.length, 10_000, 'all jobs stored');
    const base = Date.now() + 1000;
    const jobs = names.map((name, i) => ({ name, dueAt: base + i * 5 }));
    await harness.query(
      `UPDATE scheduler.scheduled_jobs AS job SET due_at = to_timestamp(moved.due_ms / 1000.0)
         FROM unnest($1::text[], $2::float8[]) AS moved(name, due_ms) WHERE job.name = moved.name`,
      [jobs.map(({ name }) => name), jobs.map(({ dueAt }) => dueAt)],
    );
    await harness.schedule(jobName('race-waker'), base - 100);
    expect(Date.now()).toBeLessThan(base - 50);

    // Each cancel is sent within a few ms of the moment its job becomes claimable (due − lead).
    const outcomes = new Map<string, JobChangeOutcome>();
    await Promise.all(
      jobs.map(async ({ name, dueAt }, i) => {
        await sleepUntil(dueAt - LEAD_MS + ((i % 9) - 4));
        outcomes.set(name, await harness.cancel(name));
      }),
    );
    // Every change committed before its answer; the events then reach the consumer.
    await until(
      () => jobs.every(({ name }) => (outcomes.get(name) === JobChangeOutcome.CHANGED ? harness.cancelled.get(name) === 1 : harness.firedCount(name) === 1)),
      5000,
      'the event of every job',
    );
    const emittedFired = await harness.emitted('fired', jobs.map(({ name }) => name));
    const emittedCancelled = await harness.emitted('cancelled', jobs.map(({ name }) => name));

    const rows = await harness.rows(jobs.map(({ name }) => name));
    let changed = 0;
    for (const { name } of jobs) {
      const outcome = outcomes.get(name);
      if (outcome === JobChangeOutcome.CHANGED) {
        changed++;
        expect(harness.firedCount(name)).toBe(0);
        expect(harness.cancelled.get(name)).toBe(1);
        expect([emittedFired.get(name), emittedCancelled.get(name)]).toEqual([0, 1]);
        expect(rows.get(name)?.status).toBe('CANCELLED');
      } else {
        expect(outcome).toBe(JobChangeOutcome.ALREADY_FIRED);
        expect(harness.firedCount(name)).toBe(1);
        expect(harness.cancelled.get(name)).toBeUndefined();
        expect([emittedFired.get(name), emittedCancelled.get(name)]).toEqual([1, 0]);
        expect(rows.get(name)?.status).toBe('FIRED');
      }
    }
    if (process.env.REPORT_LATENCY) process.stdout.write(`[scheduler race] cancelled ${changed} of ${jobs.length}, the rest fired first\n`);
  }, 20_000);
});

describe('scheduler with fire lead 0', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_FIRE_LEAD_MS: '0', SCHEDULER_SWEEP_INTERVAL_MS: NO_SWEEP_MS });
    await harness.startReplica();
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('fires at due_at, never before it', async () => {
    const start = Date.now() + 400;
    const jobs = Array.from({ length: 40 }, (_, i) => ({ name: jobName('lead0'), dueAt: start + i * 25 }));
    for (const { name, dueAt } of jobs) await harness.schedule(name, dueAt);
    await until(() => jobs.every(({ name }) => harness.firedCount(name) === 1), 5000, 'every job to fire');
    for (const { name, dueAt } of jobs) {
      const [event] = harness.fired.get(name)!;
      expect(event!.firedAt).toBeGreaterThanOrEqual(dueAt);
    }
    reportLatency('lead 0, fired_at - due_at', jobs.map(({ name }) => harness.fired.get(name)![0]!.firedAt - harness.fired.get(name)![0]!.dueAt));
    reportLatency('lead 0, received - due_at', jobs.map(({ name }) => harness.fired.get(name)![0]!.receivedAt - harness.fired.get(name)![0]!.dueAt));
    reportLatency('lead 0, received - fired_at', jobs.map(({ name }) => harness.fired.get(name)![0]!.receivedAt - harness.fired.get(name)![0]!.firedAt));
  });
});

describe('scheduler with 100,000 waiting jobs', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_FIRE_LEAD_MS: String(LEAD_MS), SCHEDULER_SWEEP_INTERVAL_MS: NO_SWEEP_MS });
    // Waiting far in the future: they only make the table and its index big.
    await harness.query(
      `INSERT INTO scheduler.scheduled_jobs (name, kind, invocation_id, org_id, project_id, due_at, status, created_at, updated_at)
       SELECT 'pending-' || g, 'START_RUN', gen_random_uuid(), $1, $2, now() + interval '1 day' + g * interval '1 second', 'SCHEDULED', now(), now()
         FROM generate_series(1, 100000) AS g`,
      [ORG_ID, PROJECT_ID],
    );
    await harness.startReplica();
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('fires about 100 jobs a second, each once and never early, by the timer', async () => {
    const start = Date.now() + 1000;
    const jobs = Array.from({ length: 300 }, (_, i) => ({ name: jobName('load'), dueAt: start + i * 10 }));
    // Sent ahead of time at the same pace, as runs with runAt/delaySeconds arrive.
    for (const { name, dueAt } of jobs) {
      await sleepUntil(dueAt - 800);
      await harness.schedule(name, dueAt);
    }
    await until(() => jobs.every(({ name }) => harness.firedCount(name) >= 1), 5000, 'every job to fire');
    const emittedFired = await harness.emitted('fired', jobs.map(({ name }) => name));

    const firedLateness: number[] = [];
    const receivedLateness: number[] = [];
    for (const { name, dueAt } of jobs) {
      expect(harness.firedCount(name)).toBe(1);
      expect(emittedFired.get(name)).toBe(1);
      const [event] = harness.fired.get(name)!;
      expect(event!.firedAt).toBeGreaterThanOrEqual(dueAt - LEAD_MS);
      firedLateness.push(event!.firedAt - dueAt);
      receivedLateness.push(event!.receivedAt - dueAt);
    }
    // Every job was claimed by the armed timer (no sweep runs), however big the table. How late
    // they are is measured by `npm run bench:scheduling`, with as many waiting.
    reportLatency('100k waiting, fired_at - due_at', firedLateness);
    reportLatency('100k waiting, received - due_at', receivedLateness);
    reportLatency('100k waiting, received - fired_at', jobs.map(({ name }) => harness.fired.get(name)![0]!.receivedAt - harness.fired.get(name)![0]!.firedAt));
    const [{ waiting }] = (await harness.query(`SELECT count(*)::int AS waiting FROM scheduler.scheduled_jobs WHERE status = 'SCHEDULED'`)) as Array<{ waiting: number }>;
    expect(waiting).toBe(100_000);
  }, 30_000);
});

describe('two scheduler replicas on one table', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_FIRE_LEAD_MS: String(LEAD_MS), SCHEDULER_SWEEP_INTERVAL_MS: '200', SCHEDULER_BATCH_SIZE: '50' });
    await harness.startReplica();
    await harness.startReplica();
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('fire every one of 1,000 jobs due within a second exactly once in total', async () => {
    const start = Date.now() + 3000;
    const jobs = Array.from({ length: 1000 }, (_, i) => ({ name: jobName('pair'), dueAt: start + i }));
    await Promise.all(jobs.map(({ name, dueAt }) => harness.schedule(name, dueAt)));
    // A limit for a failing run only, not a speed: on a loaded machine 1,000 jobs take a while.
    await until(() => jobs.every(({ name }) => harness.firedCount(name) >= 1), 20_000, 'every job to fire');
    // The outbox counts below are final (each event is written in the transaction that fired
    // its job): they, not a wait for stray deliveries, show that no job fired twice.
    for (const { name, dueAt } of jobs) {
      expect(harness.firedCount(name)).toBe(1);
      expect(harness.fired.get(name)![0]!.firedAt).toBeGreaterThanOrEqual(dueAt - LEAD_MS);
    }
    const [{ fired }] = (await harness.query(`SELECT count(*)::int AS fired FROM scheduler.scheduled_jobs WHERE status = 'FIRED'`)) as Array<{ fired: number }>;
    expect(fired).toBe(1000);
    // One ScheduledJobFired per job in the outbox: no replica emitted one twice.
    const [{ events }] = (await harness.query(
      `SELECT count(*)::int AS events FROM scheduler.outbox WHERE subject LIKE '%scheduled-job-fired'`,
    )) as Array<{ events: number }>;
    expect(events).toBe(1000);
    reportLatency('two replicas, fired_at - due_at', jobs.map(({ name }) => harness.fired.get(name)![0]!.firedAt - harness.fired.get(name)![0]!.dueAt));
  }, 30_000);
});

/**
 * No sweep runs after the start here either, so the jobs that came due while no scheduler ran
 * can fire only by the pass at start (or the timer it arms), not by a later sweep.
 */
describe('scheduler restart', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_FIRE_LEAD_MS: String(LEAD_MS), SCHEDULER_SWEEP_INTERVAL_MS: NO_SWEEP_MS });
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('fires the jobs that came due while it was down at once on start, each once', async () => {
    const first = await harness.startReplica();
    // Stored an hour ahead, so the running replica cannot fire them however long storing takes.
    const farFrom = Date.now() + 3_600_000;
    const stored = Array.from({ length: 300 }, (_, i) => ({ name: jobName('down'), dueAt: farFrom + i }));
    for (const { name, dueAt } of stored) await harness.schedule(name, dueAt);
    await until(async () => (await harness.rows(stored.map(({ name }) => name))).size === stored.length, 10_000, 'all jobs stored');
    await first.stop();

    // While it is down, their time comes: the table's due times are moved to now, as the hour
    // passing would (nothing runs that could notice).
    const dueFrom = Date.now();
    await harness.query(`UPDATE scheduler.scheduled_jobs SET due_at = due_at - $2 * interval '1 millisecond' WHERE name = ANY($1::text[])`, [
      stored.map(({ name }) => name),
      farFrom - dueFrom,
    ]);
    // More jobs arrive on the queue, some already due when they are sent.
    const queued = Array.from({ length: 100 }, (_, i) => ({ name: jobName('queued'), dueAt: dueFrom + (i % 2 === 0 ? -1000 : 300) + i }));
    for (const { name, dueAt } of queued) await harness.schedule(name, dueAt);
    // Waits for the time at which every job is due, not for work to finish: nothing runs that
    // could fire them, and the start below must fire all of them at once.
    await sleepUntil(dueFrom + 600);
    const all = [...stored, ...queued];
    expect(all.every(({ name }) => harness.firedCount(name) === 0)).toBe(true);

    // Fired by the start, as no sweep runs: how soon after it depends on the machine, so the
    // wait only guards against hanging (REPORT_LATENCY=1 prints the time it took).
    const startedAt = Date.now();
    await harness.startReplica();
    await until(() => all.every(({ name }) => harness.firedCount(name) >= 1), 20_000, 'every job to fire after the start');
    const lastReceived = Math.max(...all.map(({ name }) => harness.fired.get(name)![0]!.receivedAt));
    const emittedFired = await harness.emitted('fired', all.map(({ name }) => name));
    for (const { name } of all) {
      expect(harness.firedCount(name)).toBe(1);
      expect(emittedFired.get(name)).toBe(1);
    }
    if (process.env.REPORT_LATENCY) {
      process.stdout.write(`[scheduler restart] ${all.length} jobs fired and received within ${lastReceived - startedAt} ms of the start call\n`);
    }
  }, 30_000);
});
