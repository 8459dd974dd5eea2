import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import { BUS, type Bus, type BusMessage } from '@runline/bus';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampFromDate,
  toBinary,
  notStartedReason,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { inSpan, type Logger } from '@runline/observability';
import { OutboundError, OutboundGuard } from '@runline/outbound';
import { FireTimer, LOGGER, METRICS_REGISTRY, PassLoop, SecretBox, systemTimers } from '@runline/runtime';
import { PollingConfig } from '../config.js';
import { isObject, itemPayload, itemRunBody, itemRunKey, itemsOf, selectItems, type SelectedItem } from './poll-items.js';
import { itemRunFailedMessage, pollFailedMessage } from './polling-messages.js';
import { ProjectStateReader } from './project-state-reader.js';
import { claimDueTriggers, completePolls, nextDueAt, releaseLeases, renewLease, type ClaimedTrigger, type PollCompletion } from './polling-triggers.repository.js';

/**
 * How long shutdown waits for the polls in progress (Kubernetes gives 45 s from SIGTERM to
 * SIGKILL); the leases of those still running then are released, so another replica takes them.
 */
const SHUTDOWN_GRACE_MS = 25_000;

/** A poll's outcome waiting for its batch; `taken` once a batch has taken it to write. */
interface PendingOutcome {
  completion: PollCompletion;
  messages: BusMessage[];
  taken: boolean;
}

/**
 * Polls on time, each trigger once per due time across replicas.
 *
 * The table is the truth. A claim pass takes every trigger due within POLLING_CLAIM_LEAD_MS
 * that no live lease holds (one transaction, `SKIP LOCKED`, leased to this replica), and each
 * claimed poll starts on a local timer at its due time, so one transaction serves many polls
 * and poll starts do not wait for the database. One timer is armed for the earliest due
 * trigger (passes at most every lead/2, so a busy table does not turn into a pass per
 * trigger), a sweep every POLLING_SWEEP_INTERVAL_MS is the backstop (triggers other replicas
 * released, lost wake-ups), and a trigger registered here offers its due time at once.
 *
 * A poll follows the spec's steps: GET through the outbound guard (timeout, size cap), items
 * selected by the lastSeenValue rule, one sync flow run per item (trigger source POLLING, the
 * same trigger checks as POST /flows/{projectId}/trigger, an idempotency key derived from the
 * trigger, the due time and the item, so a poll retried after a crash does not run an item
 * twice). Its outcome (remembered value, poll time, next due time = due + intervalMs, lease
 * released) and its dead-letter events commit together, in batches shared by polls that end
 * at about the same time.
 *
 * Shutdown (SIGTERM, a rolling restart) claims nothing more and releases the lease of every
 * poll claimed here whose timer has not fired, so another replica polls it on time instead of
 * after POLLING_LEASE_MS; polls in progress finish and write their outcome within
 * SHUTDOWN_GRACE_MS, and those still running then are released too.
 */
@Injectable()
export class Poller implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly leadMs: number;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly passes = new PassLoop(() => this.pass());
  private readonly timer: FireTimer;
  private readonly inFlight = new Map<Promise<void>, ClaimedTrigger>();
  /** Polls claimed here whose start timer has not fired yet, with that timer. */
  private readonly scheduled = new Map<ClaimedTrigger, () => void>();
  private readonly pending: PendingOutcome[] = [];
  private flushing: Promise<void> | undefined;
  private readonly lateness: Histogram;
  /** Polls by outcome, one child per outcome (a label lookup per poll showed in its profile). */
  private readonly polls: Record<'ok' | 'failed' | 'skipped', Counter.Internal>;
  /** The project state of polls coming due, read after each came due, shared by polls due together. */
  private readonly projects: ProjectStateReader;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly guard: OutboundGuard,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(PollingConfig) private readonly config: PollingConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.leadMs = config.POLLING_CLAIM_LEAD_MS;
    this.timer = new FireTimer(this.leadMs, () => this.wake(), systemTimers, Math.floor(this.leadMs / 2));
    this.lateness = new Histogram({
      name: 'runline_polling_start_lateness_seconds',
      help: 'From a poll due time to the moment its request was sent.',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 60],
      registers: [registry],
    });
    const polls = new Counter({ name: 'runline_polling_polls_total', help: 'Polls by outcome.', labelNames: ['outcome'], registers: [registry] });
    this.polls = { ok: polls.labels('ok'), failed: polls.labels('failed'), skipped: polls.labels('skipped') };
    this.projects = new ProjectStateReader(this.transactions.dataSource.manager, config.POLLING_STATE_READ_WINDOW_MS);
  }

  onApplicationBootstrap(): void {
    this.state = 'running';
    this.sweepTimer = setInterval(() => this.wake(), this.config.POLLING_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    this.wake();
  }

  /**
   * Stops claiming, releases the polls claimed here that have not started, waits (within
   * SHUTDOWN_GRACE_MS) for the polls in progress and writes their outcome; releases those that
   * did not finish in time.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    clearInterval(this.sweepTimer);
    this.timer.stop();
    await this.passes.stop();
    // A pass that ended meanwhile scheduled what it claimed; none of it starts now.
    const notStarted = [...this.scheduled.entries()];
    this.scheduled.clear();
    for (const [, cancel] of notStarted) cancel();
    await this.release(notStarted.map(([trigger]) => trigger), 'not started');
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace over'>((resolve) => (graceTimer = setTimeout(() => resolve('grace over'), SHUTDOWN_GRACE_MS)));
    const finished = await Promise.race([Promise.allSettled([...this.inFlight.keys()]), graceOver]);
    clearTimeout(graceTimer);
    await this.flush();
    if (finished === 'grace over') await this.release([...this.inFlight.values()], 'still in progress at the end of the shutdown grace');
  }

  /** Gives back the leases of `triggers`: another replica claims them at once, for the same due time. */
  private async release(triggers: ClaimedTrigger[], why: string): Promise<void> {
    if (triggers.length === 0) return;
    try {
      const released = await this.transactions.run((tx) => releaseLeases(tx.manager, triggers.map((trigger) => ({ id: trigger.id, leaseId: trigger.leaseId }))));
      this.logger.info({ count: released.size, why }, 'polls released at shutdown');
    } catch (error) {
      this.logger.warn({ err: error, count: triggers.length, why }, 'could not release claimed polls; they are taken up after their lease');
    }
  }

  /** A trigger due at `dueAt` was registered or released here: poll it on time. */
  offer(dueAt: Date): void {
    if (this.state === 'running') this.timer.offer(dueAt.getTime());
  }

  private wake(): void {
    if (this.state !== 'running') return;
    this.passes.wake();
  }

  private async pass(): Promise<void> {
    this.timer.passStarted();
    let next: number | null = null;
    let horizon = 0;
    let now = Date.now();
    try {
      let claimed: number;
      do {
        now = Date.now();
        horizon = now + this.leadMs;
        claimed = await this.claim(now, horizon);
      } while (claimed === this.config.POLLING_BATCH_SIZE && this.state === 'running');
      next = (await nextDueAt(this.transactions.dataSource.manager, new Date(now)))?.getTime() ?? null;
    } catch (error) {
      this.logger.warn({ err: error }, 'polling claim pass failed; the next sweep tries again');
    } finally {
      // Passes are at least half the lead apart, so one serves every trigger due in a stretch.
      this.timer.passEnded(next, horizon);
    }
  }

  private async claim(now: number, horizon: number): Promise<number> {
    const leaseId = randomUUID();
    const claimed = await this.transactions.run((tx) =>
      claimDueTriggers(tx.manager, new Date(now), new Date(horizon), new Date(horizon + this.config.POLLING_LEASE_MS), leaseId, this.config.POLLING_BATCH_SIZE),
    );
    for (const trigger of claimed) this.startAt(trigger);
    return claimed.length;
  }

  /** Starts the poll at its due time (at once when that has passed). */
  private startAt(trigger: ClaimedTrigger): void {
    const delay = trigger.dueAt.getTime() - Date.now();
    const start = () => {
      if (!this.scheduled.delete(trigger)) return; // released at shutdown
      // Each poll starts a trace of its own: its GET carries the traceparent, and the runs of
      // the items it brings belong to that trace.
      const attributes = { 'runline.polling.trigger_id': trigger.id };
      const poll = inSpan('poll', { parent: null, service: 'polling', attributes }, () => this.poll(trigger)).catch((error: unknown) => this.logger.error({ err: error, triggerId: trigger.id }, 'poll failed unexpectedly'));
      this.inFlight.set(poll, trigger);
      void poll.finally(() => this.inFlight.delete(poll));
    };
    if (delay <= 0) {
      const immediate = setImmediate(start);
      this.scheduled.set(trigger, () => clearImmediate(immediate));
    } else {
      const timeout = setTimeout(start, delay);
      this.scheduled.set(trigger, () => clearTimeout(timeout));
    }
  }

  private async poll(trigger: ClaimedTrigger): Promise<void> {
    const startedAt = new Date();
    this.lateness.observe(Math.max(0, startedAt.getTime() - trigger.dueAt.getTime()) / 1000);
    const messages: BusMessage[] = [];
    let lastSeenValue = trigger.lastSeenValue;
    let lastPolledAt: Date | null = startedAt;
    // Read as the poll comes due, not when it was claimed: a change answered in between holds.
    const project = await this.projects.read(trigger.projectId);
    const fetched = project?.pollable === false ? null : await this.fetch(trigger);
    if (fetched === null) {
      // Master switch off or project deleted: nothing fetched, no dead letter; the schedule goes on.
      this.polls.skipped.inc();
      lastPolledAt = trigger.lastPolledAt;
    } else if ('problem' in fetched) {
      this.polls.failed.inc();
      this.logger.info({ triggerId: trigger.id, pollKey: trigger.pollKey, reason: fetched.problem }, 'poll failed');
      messages.push(pollFailedMessage(trigger, fetched.problem));
    } else {
      this.polls.ok.inc();
      const selection = selectItems(fetched.items, trigger.dedupeField, trigger.lastSeenValue);
      let leaseRenewedAt = Date.now();
      for (const selected of selection.selected) {
        const failure = await this.runItem(trigger, selected, project?.configVersion ?? 0);
        if (failure) messages.push(failure);
        if (Date.now() - leaseRenewedAt > this.config.POLLING_LEASE_MS / 4) {
          leaseRenewedAt = Date.now();
          await renewLease(this.transactions.dataSource.manager, trigger.id, trigger.leaseId, new Date(leaseRenewedAt + this.config.POLLING_LEASE_MS));
        }
      }
      lastSeenValue = selection.lastSeenValue;
    }
    const followingDue = trigger.dueAt.getTime() + trigger.intervalMs;
    // A poll that ended after its next due time (slow items) does not make up for lost time.
    const nextPollAt = new Date(followingDue > Date.now() ? followingDue : Date.now() + trigger.intervalMs);
    await this.complete({ id: trigger.id, leaseId: trigger.leaseId, lastSeenValue, lastPolledAt, nextPollAt }, messages);
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug({ triggerId: trigger.id, dueAt: trigger.dueAt.getTime(), startedAt: startedAt.getTime(), tookMs: Date.now() - startedAt.getTime(), nextPollAt: nextPollAt.getTime() }, 'poll recorded');
    }
  }

  /** The GET and the items of its answer, or why the poll failed (a dead letter). */
  private async fetch(trigger: ClaimedTrigger): Promise<{ items: unknown[] } | { problem: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (trigger.sealedAuthHeader !== null) headers.authorization = this.secrets.open(trigger.sealedAuthHeader);
    let response;
    try {
      response = await this.guard.request({
        method: 'GET',
        url: trigger.pollEndpoint,
        headers,
        timeoutMs: this.config.POLLING_REQUEST_TIMEOUT_MS,
        maxResponseBytes: this.config.POLLING_MAX_RESPONSE_BYTES,
        span: { name: 'poll GET' },
      });
    } catch (error) {
      if (error instanceof OutboundError) return { problem: `Poll request failed: ${error.message}` };
      throw error;
    }
    if (response.status < 200 || response.status > 299) return { problem: `Poll endpoint answered ${response.status}` };
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      return { problem: 'Poll response is not JSON' };
    }
    return itemsOf(body);
  }

  /**
   * An item's run: one sync run (the chatbot's flow or the automation's workflow), on a copy of the project at least `configVersion` (what this
   * service knew when the poll came due); the dead-letter event when it failed or could not start.
   */
  private async runItem(trigger: ClaimedTrigger, selected: SelectedItem, configVersion: number): Promise<BusMessage | null> {
    if (!isObject(selected.item)) {
      const payload = { value: selected.item, source: trigger.source, _pollKey: trigger.pollKey };
      return itemRunFailedMessage(trigger, this.secrets.seal(JSON.stringify(payload)), 'Polled item is not a JSON object', '');
    }
    const payload = itemPayload(selected.item, trigger.source, trigger.pollKey);
    // The dead letter keeps the item as run (payload); a replay builds the same body again.
    const payloadJson = JSON.stringify(payload);
    const request = create(StartInvocationRequestSchema, {
      orgId: trigger.orgId,
      projectId: trigger.projectId,
      tokenId: '',
      target: trigger.runTarget === 'AUTOMATION' ? RunTarget.AUTOMATION : RunTarget.FLOW,
      mode: RunMode.SYNC,
      bodyJson: JSON.stringify(itemRunBody(payload, trigger.runTarget)),
      idempotencyKey: itemRunKey(trigger, selected),
      configVersion: BigInt(configVersion),
      receivedAt: timestampFromDate(new Date()),
      triggerSource: 'POLLING',
    });
    let reason: string;
    let invocationId = '';
    try {
      const reply = fromBinary(
        StartInvocationReplySchema,
        await this.bus.request(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, toBinary(StartInvocationRequestSchema, request), {
          timeoutMs: this.config.POLLING_RUN_REQUEST_TIMEOUT_MS,
        }),
      );
      invocationId = reply.invocationId;
      const notStarted = notStartedReason(reply);
      if (notStarted !== null) reason = notStarted;
      else if (reply.status === 'FAILED' || reply.status === 'TIMEOUT') reason = reply.errorMessage || `Run ended ${reply.status}`;
      else return null;
    } catch (error) {
      reason = `The run could not be started: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.logger.info({ triggerId: trigger.id, pollKey: trigger.pollKey, invocationId, reason }, 'polled item run failed');
    return itemRunFailedMessage(trigger, this.secrets.seal(payloadJson), reason, invocationId);
  }

  /** Queues the poll's outcome for the next batch and waits until it is committed. */
  private async complete(completion: PollCompletion, messages: BusMessage[]): Promise<void> {
    // Marked when a batch takes it: no search of the queue per poll (hundreds long at 10,000 polls a second).
    const outcome: PendingOutcome = { completion, messages, taken: false };
    this.pending.push(outcome);
    while (!outcome.taken) await this.nextBatch();
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) await this.nextBatch();
  }

  /** The batch being gathered or written; it is written POLLING_WRITE_BATCH_MS after it opened. */
  private nextBatch(): Promise<void> {
    this.flushing ??= sleep(this.state === 'running' ? this.config.POLLING_WRITE_BATCH_MS : 0)
      .then(() => this.flushBatch())
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushBatch(): Promise<void> {
    const batch = this.pending.splice(0, this.pending.length);
    for (const outcome of batch) outcome.taken = true;
    if (batch.length === 0) return;
    let written: Set<string>;
    try {
      written = await this.transactions.run(async (tx) => {
        for (const entry of batch) for (const message of entry.messages) tx.emit(message);
        return completePolls(tx.manager, batch.map((entry) => entry.completion), new Date());
      });
    } catch (error) {
      // The leases run out and the polls are taken up again for the same due times.
      this.logger.error({ err: error, count: batch.length }, 'could not record poll outcomes');
      return;
    }
    for (const { completion } of batch) if (written.has(completion.id)) this.offer(completion.nextPollAt);
  }
}
