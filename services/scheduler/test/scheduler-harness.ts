import { randomUUID } from 'node:crypto';
import { JetStreamBus, type Subscription } from '@runline/bus';
import {
  CancelJobReplySchema,
  CancelJobRequestSchema,
  create,
  decodeEnvelope,
  encodeEnvelope,
  EVENT_TYPES,
  fromBinary,
  JobChangeOutcome,
  JobKind,
  newEnvelope,
  RescheduleJobReplySchema,
  RescheduleJobRequestSchema,
  SCHEDULER_REQUEST_SUBJECTS,
  ScheduleJobSchema,
  STREAM_NAMES,
  STREAM_SUBJECTS,
  STREAMS,
  timestampDate,
  timestampFromDate,
  toBinary,
  toBusMessage,
  unpackPayload,
  type Envelope,
} from '@runline/contracts';
import { createLogger } from '@runline/observability';
import { migrateServices, startService, type RunningService } from '@runline/runtime';
import { createTestDatabase, deletePrefixedStreams, queryDatabase, testNatsUrl, uniqueBusPrefix, type TestDatabase } from '@runline/testing';
import { schedulerService } from '../src/scheduler.service.js';

/** One ScheduledJobFired as the test's consumer received it. */
export interface FiredRecord {
  name: string;
  dueAt: number;
  firedAt: number;
  receivedAt: number;
  envelope: Envelope;
}

/** A scheduler replica: the service and its own NATS connection. */
export interface Replica {
  service: RunningService;
  stop(): Promise<void>;
}

export const ORG_ID = randomUUID();
export const PROJECT_ID = randomUUID();

/**
 * A fresh database and bus prefix, scheduler replicas started on them the way the runtime starts
 * services, and a consumer of every scheduler event (as the invocation service would be).
 */
export class SchedulerHarness {
  readonly fired = new Map<string, FiredRecord[]>();
  readonly cancelled = new Map<string, number>();
  readonly rescheduled = new Map<string, number[]>();
  private readonly replicas = new Set<Replica>();
  private events: Subscription | undefined;

  private constructor(
    readonly database: TestDatabase,
    readonly prefix: string,
    readonly client: JetStreamBus,
    readonly environment: NodeJS.ProcessEnv,
  ) {}

  static async create(environment: NodeJS.ProcessEnv = {}): Promise<SchedulerHarness> {
    const database = await createTestDatabase();
    await migrateServices([schedulerService], database.url);
    const prefix = uniqueBusPrefix();
    const client = await JetStreamBus.connect({ url: testNatsUrl(), prefix, name: 'scheduler-test' });
    await client.ensureStreams(STREAMS);
    const harness = new SchedulerHarness(database, prefix, client, environment);
    harness.events = await client.subscribe(
      { stream: STREAM_NAMES.SCHEDULER_EVENTS, durable: 'test-scheduler-events', filterSubject: STREAM_SUBJECTS.SCHEDULER_EVENTS },
      async (message) => harness.record(decodeEnvelope(message.data)),
    );
    return harness;
  }

  /** Starts one more scheduler replica on the same schema and bus prefix. */
  async startReplica(): Promise<Replica> {
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: this.prefix, name: 'scheduler' });
    let service: RunningService;
    try {
      service = await startService(schedulerService, {
        databaseUrl: this.database.url,
        bus,
        httpPort: 0,
        environment: { ...process.env, ...this.environment },
        logger: createLogger({ service: 'scheduler', level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      });
    } catch (error) {
      await bus.close();
      throw error;
    }
    const replica: Replica = {
      service,
      stop: async () => {
        if (!this.replicas.delete(replica)) return;
        await service.stop();
        await bus.close();
      },
    };
    this.replicas.add(replica);
    return replica;
  }

  async close(): Promise<void> {
    for (const replica of [...this.replicas]) await replica.stop().catch(() => undefined);
    await this.events?.stop();
    await this.client.close().catch(() => undefined);
    await deletePrefixedStreams(testNatsUrl(), this.prefix);
    await this.database.drop();
  }

  /** The ScheduleJob command for a job (a new envelope id each call). */
  scheduleJobEnvelope(name: string, dueAt: number, kind: JobKind = JobKind.START_RUN): Envelope {
    const invocationId = invocationOf(name);
    return newEnvelope({
      type: EVENT_TYPES.SCHEDULE_JOB,
      payload: create(ScheduleJobSchema, {
        name,
        kind,
        invocationId,
        dueAt: timestampFromDate(new Date(dueAt)),
        orgId: ORG_ID,
        projectId: PROJECT_ID,
      }),
      orgId: ORG_ID,
      projectId: PROJECT_ID,
      invocationId,
    });
  }

  /** Sends a ScheduleJob through the work queue; `busId` overrides the bus dedupe key (a redelivery the stream does not drop). */
  async send(envelope: Envelope, busId?: string): Promise<void> {
    const message = toBusMessage(envelope);
    await this.client.publish(busId ? { ...message, id: busId, data: encodeEnvelope(envelope) } : message);
  }

  async schedule(name: string, dueAt: number): Promise<void> {
    await this.send(this.scheduleJobEnvelope(name, dueAt));
  }

  async cancel(name: string, fields: { invocationId?: string; orgId?: string } = {}): Promise<JobChangeOutcome> {
    const request = create(CancelJobRequestSchema, {
      name,
      kind: JobKind.START_RUN,
      invocationId: invocationOf(name),
      orgId: ORG_ID,
      projectId: PROJECT_ID,
      ...fields,
    });
    const reply = await this.client.request(SCHEDULER_REQUEST_SUBJECTS.CANCEL_JOB, toBinary(CancelJobRequestSchema, request), { timeoutMs: 5000 });
    return fromBinary(CancelJobReplySchema, reply).outcome;
  }

  async reschedule(name: string, dueAt: number): Promise<JobChangeOutcome> {
    const request = create(RescheduleJobRequestSchema, {
      name,
      kind: JobKind.START_RUN,
      invocationId: invocationOf(name),
      dueAt: timestampFromDate(new Date(dueAt)),
      orgId: ORG_ID,
      projectId: PROJECT_ID,
    });
    const reply = await this.client.request(SCHEDULER_REQUEST_SUBJECTS.RESCHEDULE_JOB, toBinary(RescheduleJobRequestSchema, request), {
      timeoutMs: 5000,
    });
    return fromBinary(RescheduleJobReplySchema, reply).outcome;
  }

  firedCount(name: string): number {
    return this.fired.get(name)?.length ?? 0;
  }

  /** Rows of the scheduler's table (epoch ms for times). */
  async rows(names: string[]): Promise<Map<string, { status: string; dueAt: number | null; firedAt: number | null }>> {
    const rows = await queryDatabase(
      this.database.url,
      'SELECT name, status, due_at, fired_at FROM scheduler.scheduled_jobs WHERE name = ANY($1::text[])',
      [names],
    );
    return new Map(
      rows.map((row) => [
        row.name as string,
        {
          status: row.status as string,
          dueAt: row.due_at ? (row.due_at as Date).getTime() : null,
          firedAt: row.fired_at ? (row.fired_at as Date).getTime() : null,
        },
      ]),
    );
  }

  /**
   * How many ScheduledJobFired (or ScheduledJobCancelled) events the scheduler emitted for each
   * job, counted in its outbox. An event is written there in the transaction that fired or
   * cancelled the job, so once that transaction committed the count is final: no wait is needed
   * to see whether a job was fired twice, or fired after it was cancelled.
   */
  async emitted(event: 'fired' | 'cancelled', names: string[]): Promise<Map<string, number>> {
    const rows = await this.query(
      `SELECT job.name, count(outbox.id)::int AS events
         FROM unnest($1::text[]) AS job(name)
         LEFT JOIN scheduler.outbox AS outbox
           ON outbox.subject LIKE $2 AND position(convert_to(job.name, 'UTF8') IN outbox.data) > 0
        GROUP BY job.name`,
      [names, `%scheduled-job-${event}`],
    );
    return new Map(rows.map((row) => [row.name as string, row.events as number]));
  }

  /** The job's ScheduleJob (envelope `envelopeId`) was handled: the scheduler's inbox has it. */
  async handled(envelopeId: string): Promise<boolean> {
    return (await this.query('SELECT 1 FROM scheduler.inbox WHERE message_id = $1', [envelopeId])).length === 1;
  }

  async query(sql: string, parameters: unknown[] = []): Promise<Array<Record<string, unknown>>> {
    return queryDatabase(this.database.url, sql, parameters);
  }

  private async record(envelope: Envelope): Promise<void> {
    const receivedAt = Date.now();
    const event = unpackPayload(envelope);
    switch (event.type) {
      case EVENT_TYPES.SCHEDULED_JOB_FIRED: {
        const { name, dueAt, firedAt } = event.payload;
        if (!dueAt || !firedAt) throw new Error(`ScheduledJobFired ${name} lacks a time`);
        const list = this.fired.get(name) ?? [];
        list.push({ name, dueAt: timestampDate(dueAt).getTime(), firedAt: timestampDate(firedAt).getTime(), receivedAt, envelope });
        this.fired.set(name, list);
        return;
      }
      case EVENT_TYPES.SCHEDULED_JOB_CANCELLED:
        this.cancelled.set(event.payload.name, (this.cancelled.get(event.payload.name) ?? 0) + 1);
        return;
      case EVENT_TYPES.SCHEDULED_JOB_RESCHEDULED: {
        const { name, dueAt } = event.payload;
        this.rescheduled.set(name, [...(this.rescheduled.get(name) ?? []), dueAt ? timestampDate(dueAt).getTime() : NaN]);
        return;
      }
      default:
        throw new Error(`unexpected event ${event.type} on the scheduler stream`);
    }
  }
}

/** A stable invocation id per job name, so tests can check what the events carry. */
export function invocationOf(name: string): string {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `00000000-0000-4000-8000-${hash.toString(16).padStart(12, '0')}`;
}

/** Polls `check` every 10 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sleeps until the epoch time `at`. */
export const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));

/** p50, p99 and max of a list of numbers (ms). */
export function percentiles(values: number[]): { n: number; p50: number; p99: number; max: number; min: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN, min: sorted[0] ?? NaN };
}

/** Prints a latency line when REPORT_LATENCY is set (kept out of normal test output). */
export function reportLatency(label: string, values: number[]): void {
  if (!process.env.REPORT_LATENCY) return;
  const { n, p50, p99, max, min } = percentiles(values);
  process.stdout.write(`[scheduler latency] ${label}: n=${n} min=${min} p50=${p50} p99=${p99} max=${max} ms\n`);
}
