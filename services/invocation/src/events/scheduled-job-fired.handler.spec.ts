import { randomUUID } from 'node:crypto';
import { BusContext, type DeliveredMessage } from '@runline/bus';
import { create, EVENT_TYPES, JobKind, newEnvelope, ScheduledJobFiredSchema, timestampFromDate } from '@runline/contracts';
import type { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { Registry } from 'prom-client';
import { QUEUEING_AT_ONCE } from '../commands/run-invocation.handler.js';
import type { InvocationConfig } from '../config.js';
import { FairStarts } from '../runs/fair-starts.js';
import type { RunStarter } from '../runs/run-starter.js';
import type { JobWait } from '../runs/start-queue.repository.js';
import { ScheduledJobFiredHandler } from './scheduled-job-fired.handler.js';

const projectId = randomUUID();
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

/** A delivered message that records how it was settled. */
function deliveredMessage() {
  const settled: string[] = [];
  const message = {
    deliveryCount: 1,
    settleLater: () => settled.push('later'),
    ack: async () => void settled.push('ack'),
    nak: async () => void settled.push('nak'),
    term: async () => void settled.push('term'),
  } as unknown as DeliveredMessage;
  return { message, settled };
}

function firedJob(kind: JobKind, name: string, dueAt: Date) {
  const invocationId = randomUUID();
  const envelope = newEnvelope({
    type: EVENT_TYPES.SCHEDULED_JOB_FIRED,
    payload: create(ScheduledJobFiredSchema, { name, kind, invocationId, dueAt: timestampFromDate(dueAt), firedAt: timestampFromDate(new Date()) }),
    orgId: randomUUID(),
    projectId,
    invocationId,
  });
  return { envelope, invocationId, ...deliveredMessage() };
}

/**
 * The handler with the real fair start order over a database that records its statements
 * (`inserts`: the rows written to the start queue; `holdInserts` keeps them from committing), and
 * a run starter whose starts wait for their due time (they never end here) with two slots free.
 */
function handlerWithFairOrder(options: { holdInserts?: boolean } = {}) {
  const inserts: Array<{ invocationId: string; status: string; waitingJob: string | null; dueAt: Date | null }> = [];
  const manager = {
    query: (sql: string, parameters: unknown[] = []) => {
      if (sql.includes('INSERT INTO start_queue')) {
        const [ids, , statuses, jobs, dueTimes] = parameters as [string[], string[], string[], Array<string | null>, Array<Date | null>];
        ids.forEach((invocationId, n) => inserts.push({ invocationId, status: statuses[n]!, waitingJob: jobs[n]!, dueAt: dueTimes[n]! }));
        return options.holdInserts ? new Promise(() => undefined) : Promise.resolve([]);
      }
      return Promise.resolve(sql.includes('UPDATE start_queue') ? [[], 0] : []);
    },
  };
  const transactions = { dataSource: { manager }, run: (work: (tx: { manager: typeof manager }) => Promise<unknown>) => work({ manager }) } as unknown as TransactionRunner;
  const startedHere: Array<{ invocationId: string; wait: Pick<JobWait, 'status' | 'waitingJob'>; notBefore: number }> = [];
  const starter = {
    freeSlots: 2,
    startsWaitingForSlot: 0,
    startForJob: (invocationId: string, wait: Pick<JobWait, 'status' | 'waitingJob'>, _acknowledge: unknown, notBefore: number) => {
      startedHere.push({ invocationId, wait, notBefore });
      return new Promise(() => undefined);
    },
  } as unknown as RunStarter;
  const config = { FAIR_START_ORDER: 'on', RUN_LEASE_MS: 15_000 } as InvocationConfig;
  const fair = new FairStarts(transactions, starter, config, silent, new Registry());
  return { handler: new ScheduledJobFiredHandler(starter, fair, silent), inserts, startedHere, fair };
}

const handle = (handler: ScheduledJobFiredHandler, job: ReturnType<typeof firedJob>) =>
  handler.handle(job.envelope, new BusContext(['scheduled-job-fired', {}, job.message]));

const settledSoon = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('ScheduledJobFiredHandler in the fair start order', () => {
  it('holds at most the free run slots + 4 fired starts; the rest are queued with what their start expects, acknowledged once written', async () => {
    const { handler, inserts, startedHere, fair } = handlerWithFairOrder();
    const dueAt = new Date(Date.now() + 60_000);
    const jobs = Array.from({ length: 20 }, (_, n) => firedJob(JobKind.START_RUN, `run-${n}`, dueAt));
    for (const job of jobs) await handle(handler, job);
    const retry = firedJob(JobKind.RETRY_RUN, 'retry-x-2', dueAt);
    const resume = firedJob(JobKind.RESUME_RUN, 'resume-x-3', dueAt);
    await handle(handler, retry);
    await handle(handler, resume);
    await settledSoon();

    expect(startedHere.map((start) => start.invocationId)).toEqual(jobs.slice(0, 6).map((job) => job.invocationId));
    expect(startedHere[0]).toMatchObject({ wait: { status: 'SCHEDULED', waitingJob: 'run-0' }, notBefore: dueAt.getTime() });
    expect(inserts).toEqual([
      ...jobs.slice(6).map((job, n) => ({ invocationId: job.invocationId, status: 'SCHEDULED', waitingJob: `run-${n + 6}`, dueAt })),
      { invocationId: retry.invocationId, status: 'QUEUED', waitingJob: 'retry-x-2', dueAt },
      { invocationId: resume.invocationId, status: 'SUSPENDED', waitingJob: 'resume-x-3', dueAt },
    ]);
    // Queued: acknowledged. Held here: settled once their run is claimed (never, here).
    for (const job of [...jobs.slice(6), retry, resume]) expect(job.settled).toEqual(['later', 'ack']);
    for (const job of jobs.slice(0, 6)) expect(job.settled).toEqual(['later']);
    await fair.onApplicationShutdown();
  });

  it('takes no more fired jobs off the bus while QUEUEING_AT_ONCE are being written', async () => {
    const { handler, inserts, fair } = handlerWithFairOrder({ holdInserts: true });
    const dueAt = new Date(Date.now() + 60_000);
    for (let n = 0; n < 6 + QUEUEING_AT_ONCE; n++) await handle(handler, firedJob(JobKind.START_RUN, `run-${n}`, dueAt));

    let taken = false;
    const next = handle(handler, firedJob(JobKind.START_RUN, 'run-next', dueAt)).then(() => (taken = true));
    await settledSoon();

    expect(taken).toBe(false);
    expect(inserts.length).toBeLessThanOrEqual(QUEUEING_AT_ONCE);
    void next;
    await fair.onApplicationShutdown();
  });
});
