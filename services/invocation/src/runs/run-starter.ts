import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { GroupCommit, TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { Gauge, type Registry } from 'prom-client';
import { LOGGER, METRICS_REGISTRY, retryTransient, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import {
  claimedResume,
  claimedStart,
  projectRefusalOf,
  QUOTA_REFUSAL,
  rechecksQuota,
  refusedStart,
  type Expectation,
  type Refusal,
  type Transition,
} from '../lifecycle/run-lifecycle.js';
import type { RunPlan } from '../lifecycle/run-plan.js';
import { historyAppend } from '../lifecycle/run-history.js';
import type { FlowRules } from '../lifecycle/flow-decision.js';
import { DefinitionCatalog } from './definition-catalog.js';
import { FlowControl } from './run-flow-control.js';
import { RunExecutor, type Execution } from './run-executor.js';
import { RunLease } from './run-lease.js';
import { readKnownInvocations, type InvocationRow } from './run-reads.repository.js';
import { RunRecorder } from './run-recorder.js';
import { RunSlots } from './run-slots.js';
import { transition, transitionAt, type KnownRun } from './run-transitions.repository.js';

/** Settles the message that asked for the start, once the claim is committed. */
export type Acknowledge = () => Promise<void>;

/** When the run may start (epoch ms): the run is read and prepared before, claimed only then. */
export type NotBefore = number;

const noRefusal = (): Promise<Refusal | null> => Promise.resolve(null);

/**
 * How an attempt to start or resume a waiting run went: claimed (it runs now, in a slot of this
 * process), not claimed (it no longer waits as expected: another message or replica took it,
 * or it failed as it came up), or no slot freed within the caller's bound (nothing changed).
 */
export type StartAttempt = 'claimed' | 'not-claimed' | 'no-slot';

/** How long a start may wait for a run slot; unbounded when absent. */
export interface SlotWait {
  slotWaitMs?: number;
}

/**
 * Starts waiting runs in this process: a QUEUED run (RunInvocation), a SCHEDULED run or a
 * retry whose time came, a SUSPENDED run whose Wait ended or whose approval was decided (the
 * scheduler's jobs, and the decider's request). Claiming
 * (→ RUNNING under this process's lease) is one transaction that applies only if the run still
 * waits as expected, so a repeated or late message never starts anything twice; the message is
 * acknowledged right after it, and the run executes in one of RUN_CONCURRENCY slots. A run
 * whose process dies is ended by the sweeper when its lease expires.
 */
@Injectable()
export class RunStarter implements OnApplicationShutdown {
  private readonly slots: RunSlots;
  /** Bounds the reads of runs about to start (a burst of fired jobs after downtime). */
  private readonly reads: RunSlots;
  /** Reads of runs about to start, many per query. */
  private readonly runReads: GroupCommit<string, InvocationRow | null>;
  /** Called when one of the run slots frees (the fair start queue takes its next run then). */
  private slotFreed: () => void = () => {};

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly executor: RunExecutor,
    private readonly lease: RunLease,
    private readonly recorder: RunRecorder,
    private readonly flow: FlowControl,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.slots = new RunSlots(config.RUN_CONCURRENCY, () => this.slotFreed());
    this.reads = new RunSlots(config.RUN_CONCURRENCY);
    this.runReads = new GroupCommit((ids) => readKnownInvocations(transactions.dataSource.manager, ids), 2);
    const slots = this.slots;
    new Gauge({
      name: 'runline_invocation_runs_executing',
      help: 'Runs this process is executing now (RUN_CONCURRENCY slots held).',
      registers: [registry],
      collect() {
        this.set(slots.held);
      },
    });
    new Gauge({
      name: 'runline_invocation_runs_waiting_for_slot',
      help: 'Runs due to start here that wait for a free RUN_CONCURRENCY slot.',
      registers: [registry],
      collect() {
        this.set(slots.queued);
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.slots.drain();
  }

  /** Run slots free now. */
  get freeSlots(): number {
    return this.slots.available;
  }

  /** Starts here waiting for a run slot now. */
  get startsWaitingForSlot(): number {
    return this.slots.queued;
  }

  /** `listener` is called each time a run slot frees (one listener: the fair start queue's). */
  onSlotFreed(listener: () => void): void {
    this.slotFreed = listener;
  }

  /**
   * Starts the next attempt of a run waiting as `from` says. When the project's external API is
   * off by then, the run ends FAILED instead (spec: queued or scheduled runs fail when they come
   * up), and so does a scheduled run whose organization's monthly quota is used up (spec: the
   * quota is checked again when it starts). Both are looked up while the run waits for its time
   * (the scheduler fires a little ahead), so the start itself is one statement.
   */
  start(invocationId: string, from: Expectation, acknowledge: Acknowledge, notBefore: NotBefore = 0): Promise<StartAttempt> {
    return this.inSlot(invocationId, from, acknowledge, notBefore, {}, (row) => this.refusalOf(row, from), async (row, plan, refusal) => {
      if (refusal) {
        const refused = refusedStart(row, plan, from, refusal, this.secrets);
        await this.transactions.run((tx) => transition(tx, row.id, refused.expected, refused.change, historyAppend(refused)));
        return null;
      }
      const claim = claimedStart(row, from, this.lease.next(row.id));
      const rules = await this.flow.rulesOf(row, plan);
      if (rules) return this.gatedClaim(row, plan, claim, rules);
      const claimed = await this.claim(row, claim);
      return claimed ? () => this.executor.execute({ ...row, status: 'RUNNING', attempt: claim.change.attempt!, known: claimed.known, claimedSequence: claimed.sequence, lease: claim.change.lease }, plan, null) : null;
    });
  }

  /**
   * A start under flow control: claimed only if its slots allow it now (flow-gate.repository.ts),
   * else it stays waiting (`flow_waits`) and the FlowDispatcher of some replica tries it again.
   * Once it stops here (ended or paused), the dispatcher is told a slot may have freed.
   */
  private async gatedClaim(row: InvocationRow, plan: RunPlan, claim: Transition, rules: FlowRules): Promise<(() => Promise<Execution>) | null> {
    if (rules.slots.length === 0 && !rules.debounce) {
      const claimed = await this.claim(row, claim);
      return claimed ? () => this.executor.execute({ ...row, status: 'RUNNING', attempt: claim.change.attempt!, known: claimed.known, claimedSequence: claimed.sequence, lease: claim.change.lease }, plan, null) : null;
    }
    // The gate decides one batch at a time: the run slot is lent out while this start waits
    // for its batch, and taken back before the batch is decided, so a run is RUNNING here only
    // in a slot. Held through the wait, 16 slots let at most 16 starts into a batch
    // (bench:sustained --system flow-control: 229 against 516 runs/s finished with 64 slots).
    const takeBack = this.slots.lend();
    let started: KnownRun | null;
    try {
      ({ started } = await this.flow.gate(row, rules, claim, takeBack));
    } finally {
      await takeBack();
    }
    if (!started) return null;
    return () =>
      this.executor
        .execute({ ...row, status: 'RUNNING', attempt: claim.change.attempt!, known: started, claimedSequence: started.sequence, lease: claim.change.lease }, plan, null)
        .finally(() => this.flow.released(row.id));
  }

  /** Why the run may not start (it fails instead), or null. */
  private async refusalOf(row: InvocationRow, from: Expectation): Promise<Refusal | null> {
    // Read afresh: a change answered while the run waited (the switch turned off, the project
    // deleted) must hold when it starts.
    const refusal = projectRefusalOf(await this.catalog.project(row.projectId, { fresh: true }));
    if (refusal || !rechecksQuota(from)) return refusal;
    const verdict = await this.recorder.scheduledStartVerdict(row.id, row.orgId);
    if (verdict.allowed) return null;
    this.logger.info({ invocationId: row.id, orgId: row.orgId, ...verdict.figures }, 'scheduled run refused: monthly quota used up');
    return QUOTA_REFUSAL;
  }

  /**
   * Resumes a run SUSPENDED at a Wait node or a decided approval, waiting for job `waitingJob`:
   * when the job fires, or at once for the decider of an approval (with a bounded `slotWaitMs`).
   */
  resume(invocationId: string, waitingJob: string, acknowledge: Acknowledge, notBefore: NotBefore = 0, wait: SlotWait = {}): Promise<StartAttempt> {
    const from: Expectation = { status: 'SUSPENDED', waitingJob };
    return this.inSlot(invocationId, from, acknowledge, notBefore, wait, noRefusal, async (row, plan) => {
      const claim = claimedResume(row, waitingJob, this.lease.next(row.id));
      const claimed = await this.claim(row, claim);
      return claimed ? () => this.executor.resume({ ...row, status: 'RUNNING', known: claimed.known, claimedSequence: claimed.sequence, lease: claim.change.lease }, plan) : null;
    });
  }

  /** Moves the run to RUNNING under this process's lease: one statement when the run is as read. */
  private async claim(row: InvocationRow, claim: Transition): Promise<{ known: KnownRun | null; sequence?: number } | null> {
    const { expected, change } = claim;
    const history = historyAppend(claim);
    if (row.known) return this.recorder.transitionKnown({ known: row.known, expected, change, history });
    const written = await this.transactions.run((tx) => transitionAt(tx, row.id, expected, change, history));
    // The sequence lets the run say its steps live (RunProgress) after its Started or Resumed.
    return written?.document ? { known: null, sequence: written.sequence } : null;
  }

  /**
   * Reads the run and asks `refusalOf` whether it may start (at most RUN_CONCURRENCY reads at
   * once), waits until `notBefore` holding nothing, then takes a run slot (reading again if it
   * had to wait for one; a run already due is read only once it has its slot) and lets `claim`
   * move it (or fail it, when refused). If it was
   * claimed, acknowledges and runs what `claim` returned in the background, holding the slot
   * until it ends. Waiting runs do not hold slots: the scheduler fires up to its lead early,
   * and the runs due in that stretch must not keep the ones already due from their slots. With
   * `wait.slotWaitMs`, gives up (`no-slot`, nothing changed) when no slot frees in that time.
   */
  private async inSlot(
    invocationId: string,
    from: Expectation,
    acknowledge: Acknowledge,
    notBefore: NotBefore,
    wait: SlotWait,
    refusalOf: (row: InvocationRow) => Promise<Refusal | null>,
    claim: (row: InvocationRow, plan: RunPlan, refusal: Refusal | null) => Promise<(() => Promise<Execution>) | null>,
  ): Promise<StartAttempt> {
    // A run due now takes its slot first and is read once, in it: reading it before a wait for
    // a slot would mean reading it again after (what was read may be out of date by then).
    // (A caller with a bounded slot wait learns first whether the run still waits at all.)
    const dueNow = notBefore <= Date.now() && wait.slotWaitMs === undefined;
    let prepared = dueNow ? undefined : await this.prepare(invocationId, from, refusalOf);
    if (prepared === null) return 'not-claimed';
    // A timer may wake a millisecond early: wait again until the time has really come.
    for (let early = notBefore - Date.now(); early > 0; early = notBefore - Date.now()) await sleep(early);
    const slotWasFree = this.slots.tryAcquire();
    if (!slotWasFree) {
      if (wait.slotWaitMs === undefined) await this.slots.acquire();
      else if (!(await this.slots.acquireWithin(wait.slotWaitMs))) return 'no-slot';
    }
    let handedOver = false;
    try {
      // After a wait for a slot, what was read may be out of date (the switch turned off meanwhile).
      if (!slotWasFree || prepared === undefined) prepared = await this.prepare(invocationId, from, refusalOf);
      if (!prepared) return 'not-claimed';
      const { row, plan, refusal } = prepared;
      const run = await retryTransient(() => claim(row, plan, refusal));
      if (!run) return 'not-claimed';
      // The run is ours now (RUNNING under our lease): it runs at once, under its lease's
      // renewal, while the bus takes the acknowledgement. Waiting for that first would let the
      // lease run out while NATS is away. If the acknowledgement is lost, the command comes
      // again later, finds the run no longer waiting and is dropped, so nothing runs twice.
      handedOver = true;
      this.slots.track(
        run().catch((error: unknown) => {
          this.logger.error({ err: error, invocationId }, 'run could not be recorded; its lease will expire and end it');
        }),
      );
      await acknowledge().catch((error: unknown) =>
        this.logger.warn({ err: error, invocationId }, 'could not acknowledge the start command; the run goes on and the redelivery will be ignored'),
      );
      return 'claimed';
    } finally {
      if (!handedOver) this.slots.release();
    }
  }

  /** The run as read, its plan and whether it must fail instead; null when it no longer waits as `from` says. */
  private async prepare(
    invocationId: string,
    from: Expectation,
    refusalOf: (row: InvocationRow) => Promise<Refusal | null>,
  ): Promise<{ row: InvocationRow; plan: RunPlan; refusal: Refusal | null } | null> {
    await this.reads.acquire();
    try {
      const row = await retryTransient(() => this.runReads.submit(invocationId));
      if (!row || row.status !== from.status || (from.waitingJob !== undefined && row.waitingJob !== from.waitingJob)) return null;
      const plan = JSON.parse(this.secrets.open(row.sealedPlan)) as RunPlan;
      return { row, plan, refusal: await retryTransient(() => refusalOf(row)) };
    } finally {
      this.reads.release();
    }
  }
}
