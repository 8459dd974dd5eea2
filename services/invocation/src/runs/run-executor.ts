import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TransactionRunner } from '@runline/db';
import { runGraph, type CompiledDefinition, type JsonValue, type ResumeRequest, type RunOutcome, type RunPorts } from '@runline/engine';
import { inSpan, type Logger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { LOGGER, METRICS_REGISTRY, retryTransient, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import { endingOf, failedOutcome, skippedEnding, type AttemptOf, type Ending, type SuspendedState } from '../lifecycle/run-endings.js';
import { historyAppend, type HistoryAppend } from '../lifecycle/run-history.js';
import { endsInFirstRecord, type EndedRunTimes } from '../lifecycle/run-lifecycle.js';
import { compileDraft, type RunPlan } from '../lifecycle/run-plan.js';
import { BotSessions, SessionTurnTimeoutError, type BotSessionState } from './bot-sessions.js';
import { DefinitionCatalog } from './definition-catalog.js';
import { claimEnrollment } from './enrollments.repository.js';
import { engineRunPorts } from './engine-ports.js';
import { runningSequence, type InvocationRow } from './run-reads.repository.js';
import { RunLease } from './run-lease.js';
import { RunRecorder } from './run-recorder.js';
import { RunProgressPublisher } from './run-progress.publisher.js';
import { RunSlots } from './run-slots.js';
import { renewLease, transition } from './run-transitions.repository.js';

/**
 * How long an async run of a self-contained graph may run while its request waits for the 202
 * (`runBeforeRecording`); one that needs longer runs from the queue instead.
 */
export const ASYNC_INLINE_RUN_MS = 20;

/** A finished (or paused) execution: the read model after it, and the live result for a sync caller. */
export interface Execution {
  document: InvocationDocument | null;
  /** The run's result unredacted, for the caller waiting on a sync run; null when it has none. */
  liveResult: JsonValue;
}

/** A new run executed before it was recorded, ended: what its one write records. */
export interface RanBeforeRecording {
  outcome: RunOutcome;
  ending: Ending;
  times: EndedRunTimes;
  /** Frees the run's inline slot: call it once the run is written, or its write has failed. */
  release(): void;
}

/**
 * Executes runs: loads the compiled definition, applies ONE_TIME enrollment and bot sessions,
 * runs the engine under this process's lease (renewed while it runs), asks the lifecycle core
 * how the attempt ends (`run-endings.ts`) and records that. A self-contained new run may be
 * executed before it is recorded instead (`runBeforeRecording`); its caller records it once.
 */
@Injectable()
export class RunExecutor implements OnApplicationShutdown {
  private readonly ports: RunPorts;
  private readonly heartbeats = new Set<NodeJS.Timeout>();
  private readonly attemptDuration: Histogram<'target_type' | 'status'>;
  /** Async runs executed as their requests wait (`runBeforeRecording`), until written. */
  private readonly inlineRuns: RunSlots;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly sessions: BotSessions,
    private readonly lease: RunLease,
    private readonly recorder: RunRecorder,
    private readonly progress: RunProgressPublisher,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(OutboundGuard) outbound: OutboundGuard,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.ports = engineRunPorts(outbound);
    this.attemptDuration = new Histogram({
      name: 'runline_invocation_run_attempt_duration_seconds',
      help: 'Engine time of each executed run attempt, by target and how the attempt ended (QUEUED: a retry follows).',
      labelNames: ['target_type', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    const inlineRuns = new RunSlots(config.ASYNC_INLINE_RUNS);
    this.inlineRuns = inlineRuns;
    new Gauge({
      name: 'runline_invocation_inline_runs_in_progress',
      help: 'Async runs executed as their requests wait, not yet written (at most ASYNC_INLINE_RUNS; more are queued).',
      registers: [registry],
      collect() {
        this.set(inlineRuns.held);
      },
    });
  }

  onApplicationShutdown(): void {
    for (const timer of this.heartbeats) clearInterval(timer);
  }

  /** Runs a RUNNING invocation this process holds the lease of, to its next resting state. */
  execute(row: InvocationRow, plan: RunPlan, compiled: CompiledDefinition | null): Promise<Execution> {
    return inRunSpan('run', row.id, plan, () => this.underLease(row, plan, async () => {
      const definition = compiled ?? (await this.definitionFor(row, plan));
      const enrolledBy = await this.enrollmentConflict(row, plan);
      if (enrolledBy) {
        const skipped = skippedEnding(row, plan, enrolledBy, this.secrets);
        const history = historyAppend(skipped);
        return await this.record(row, skipped, history);
      }
      const live = this.liveProgressOf(row);
      const outcome = plan.target === 'BOT' ? await this.runBotTurn(row, plan, definition, live) : await this.runGraph(plan, definition, undefined, undefined, undefined, live);
      return await this.finish(row, plan, outcome);
    }));
  }

  /**
   * The engine's onStep port that says this segment's steps live: the one place every execution
   * of a recorded run (queued, sync, gated by flow control, resumed) gets it from. The segment
   * follows the claim's event; its sequence is read here when the claim did not say it (a gated
   * start), while the run goes on.
   */
  private liveProgressOf(row: InvocationRow): RunPorts['onStep'] {
    const sequence = row.known?.sequence ?? row.claimedSequence ?? this.claimedSequenceOf(row.id);
    return this.progress.reporterFor({ id: row.id, orgId: row.orgId, projectId: row.projectId, sequence });
  }

  /** The sequence of a run this process holds RUNNING (its claim's event); null when it cannot be read. */
  private async claimedSequenceOf(id: string): Promise<number | null> {
    try {
      return await runningSequence(this.dataSource.manager, id, this.lease.owner);
    } catch (error) {
      this.logger.debug({ err: error, invocationId: id }, 'the run sequence could not be read; its steps are not said live');
      return null;
    }
  }

  /**
   * Continues a run that was SUSPENDED (now RUNNING under this process's lease): after its Wait
   * node, or at its approval with the decision recorded in its resume state.
   */
  resume(row: InvocationRow, plan: RunPlan): Promise<Execution> {
    return inRunSpan('run resume', row.id, plan, () => this.underLease(row, plan, async () => {
      if (!row.sealedResumeState) throw new Error('the suspended run kept no state to resume from');
      const state = JSON.parse(this.secrets.open(row.sealedResumeState)) as SuspendedState;
      const definition = await this.definitionFor(row, plan);
      const outcome = await this.runGraph(plan, definition, resumeRequestOf(state), state.vars, undefined, this.liveProgressOf(row));
      return await this.finish(row, plan, outcome);
    }));
  }

  /**
   * Executes a new run of a self-contained graph (`recordsOnceEnded`) before it is recorded, to
   * its ending: the caller records it once, ended (one write instead of two). Nothing of it is
   * visible outside before that write, so a crash meanwhile leaves no trace and the client gets
   * no answer, as if the request had not arrived.
   *
   * A sync run always ends here. An async one is executed as its request waits, and its 202
   * still says QUEUED (the spec's answer; the run's later states are read with GET). Null when
   * it is to be recorded QUEUED as usual instead: ASYNC_INLINE_RUNS are in progress already
   * (each counted until `release`), the run needed more than ASYNC_INLINE_RUN_MS (it runs again
   * from the queue under its full limit; it changed nothing), or it did not end (a retry). These
   * runs hold no RUN_CONCURRENCY slot: the slots bound runs that wait on the outside world, and
   * a queued backlog holding all of them must not send every new run the costlier way.
   */
  async runBeforeRecording(run: AttemptOf & { occurredAt: Date }, plan: RunPlan, compiled: CompiledDefinition): Promise<RanBeforeRecording | null> {
    const whileAccepting = plan.mode === 'ASYNC';
    if (whileAccepting && !this.inlineRuns.tryAcquire()) return null;
    const release = whileAccepting ? () => this.inlineRuns.release() : () => {};
    try {
      const limitMs = this.timeLimitMs(plan.mode);
      const budgetMs = whileAccepting ? Math.min(limitMs, ASYNC_INLINE_RUN_MS) : limitMs;
      const startedAt = whileAccepting ? new Date() : run.occurredAt;
      const outcome = await this.runUnrecorded(plan, compiled, run.id, budgetMs);
      if (outcome.status === 'TIMEOUT' && budgetMs < limitMs) {
        this.logger.debug({ invocationId: run.id, budgetMs }, 'async run needed more than a request may wait for it; it runs from the queue');
        release();
        return null;
      }
      const ending = endingOf(run, plan, outcome, this.secrets);
      if (whileAccepting && !endsInFirstRecord(ending)) {
        release();
        return null;
      }
      return { outcome, ending, times: { acceptedAt: run.occurredAt, startedAt, endedAt: new Date() }, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Runs a run that is not recorded yet to its end, in memory (`runBeforeRecording`), within
   * `timeoutMs`: the mode's limit, or less for an async run executed while its request waits.
   */
  private runUnrecorded(plan: RunPlan, compiled: CompiledDefinition, invocationId: string, timeoutMs: number): Promise<RunOutcome> {
    return inRunSpan('run', invocationId, plan, async () => {
      try {
        return await this.runGraph(plan, compiled, undefined, undefined, timeoutMs);
      } catch (error) {
        this.logger.error({ err: error }, 'run failed unexpectedly');
        return failedOutcome(plan, `Run could not be executed: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }

  /** Times an attempt executed before it was recorded (`runBeforeRecording`), once its record is written. */
  countUnrecordedAttempt(plan: RunPlan, ran: RanBeforeRecording): void {
    this.attemptDuration.observe({ target_type: plan.target, status: ran.ending.change.status }, ran.outcome.trace.durationMs / 1000);
  }

  /** The engine's time limit of a run in `mode`. */
  private timeLimitMs(mode: RunPlan['mode']): number {
    return mode === 'SYNC' ? this.config.SYNC_RUN_TIMEOUT_MS : this.config.ASYNC_RUN_TIMEOUT_MS;
  }

  /**
   * Renews the lease while `work` runs. A database error that passes (a cut connection, a
   * restart) runs the attempt again after a pause instead of failing it, like an automation
   * retry would; any other unexpected error ends the attempt as failed.
   */
  private async underLease(row: InvocationRow, plan: RunPlan, work: () => Promise<Execution>): Promise<Execution> {
    const release = this.lease.hold(row.id);
    // A lease taken before a slow commit may be mostly spent already: renew it before the
    // first beat, or another replica's sweeper could judge this process dead.
    if (row.lease && this.lease.isSpent(row.lease.expiresAt)) void this.renewLease(row.id);
    const heartbeat = setInterval(() => void this.renewLease(row.id), Math.max(250, Math.floor(this.config.RUN_LEASE_MS / 3)));
    heartbeat.unref();
    this.heartbeats.add(heartbeat);
    try {
      return await retryTransient(work, {
        onRetry: (error, attempt) => this.logger.warn({ err: error, invocationId: row.id, attempt }, 'run attempt hit a passing database error; running it again'),
      });
    } catch (error) {
      this.logger.error({ err: error, invocationId: row.id }, 'run failed unexpectedly');
      const message = error instanceof Error ? error.message : String(error);
      return await this.finish(row, plan, failedOutcome(plan, `Run could not be executed: ${message}`));
    } finally {
      clearInterval(heartbeat);
      this.heartbeats.delete(heartbeat);
      release();
    }
  }

  /** Records how the attempt ended, as the lifecycle core says. */
  private async finish(row: InvocationRow, plan: RunPlan, outcome: RunOutcome): Promise<Execution> {
    const ending = endingOf(row, plan, outcome, this.secrets);
    const history = historyAppend(ending);
    const execution = await this.record(row, ending, history);
    if (execution.document) this.attemptDuration.observe({ target_type: plan.target, status: ending.change.status }, outcome.trace.durationMs / 1000);
    return execution;
  }

  /**
   * Records the end of an attempt, with the `history` the caller prepared from it (the
   * lifecycle core decides, then the write only writes): one statement when this process knows
   * the run as it is. A cut connection or a server restart must not lose the outcome of a run
   * that ran: the write is retried, and is safe to repeat (it applies only to the run still
   * RUNNING under this process's lease, so a write that did commit before the error is not made
   * twice).
   */
  private async record(row: InvocationRow, ending: Ending, history: HistoryAppend): Promise<Execution> {
    const expected = { status: 'RUNNING' as const, leaseOwner: this.lease.owner };
    const { change } = ending;
    const document = await retryTransient(
      async () => {
        if (row.known) return (await this.recorder.transitionKnown({ known: row.known, expected, change, history }))?.document ?? null;
        return this.transactions.run((tx) => transition(tx, row.id, expected, change, history));
      },
      { onRetry: (error, attempt) => this.logger.warn({ err: error, invocationId: row.id, attempt }, 'recording a run outcome failed for a passing reason; retrying') },
    );
    if (ending.what !== null) this.logRetryOrLoss(document, row.id, ending.what);
    return { document, liveResult: ending.liveResult };
  }

  private async definitionFor(row: InvocationRow, plan: RunPlan): Promise<CompiledDefinition> {
    if (plan.draftDefinition !== null) return compileDraft('AUTOMATION', plan.draftDefinition);
    const project = await retryTransient(() => this.catalog.project(row.projectId, { publishedVersion: plan.definitionVersion }));
    if (!project) throw new Error('project is unknown to the invocation service');
    return this.catalog.published(project);
  }

  private runGraph(
    plan: RunPlan,
    compiled: CompiledDefinition,
    resume?: ResumeRequest,
    vars?: Record<string, unknown>,
    timeoutMs?: number,
    onStep?: RunPorts['onStep'],
  ): Promise<RunOutcome> {
    const outcome = runGraph(
      compiled,
      {
        graph: plan.graph,
        scope: { payload: plan.payload, input: plan.input, session: plan.session, vars: vars ?? {} },
        onErrorPolicy: plan.onErrorPolicy,
        limits: {
          maxSteps: this.config.RUN_MAX_STEPS,
          timeoutMs: timeoutMs ?? this.timeLimitMs(plan.mode),
        },
        ...(resume ? { resume } : {}),
      },
      onStep ? { ...this.ports, onStep } : this.ports,
    );
    // The run records the published version it executed (the console draws that graph).
    const definitionVersion = this.catalog.versionOf(compiled);
    return definitionVersion === null ? outcome : outcome.then((ran) => ({ ...ran, trace: { ...ran.trace, definitionVersion } }));
  }

  /**
   * One message of a conversation: continue at the session's open question, or start over. It
   * runs as its session's only turn across replicas (`BotSessions.takeTurn`). The run's time
   * limit counts from here: a message that had to wait for the session's earlier messages runs
   * with what is left of it, and one whose turn does not come within it ends TIMEOUT.
   */
  private async runBotTurn(row: InvocationRow, plan: RunPlan, compiled: CompiledDefinition, onStep?: RunPorts['onStep']): Promise<RunOutcome> {
    const session = plan.session;
    if (!session) throw new Error('bot run without a session');
    const limitMs = this.timeLimitMs(plan.mode);
    const deadline = Date.now() + limitMs;
    const turn = { projectId: row.projectId, sessionId: session.id, holder: `${this.lease.owner} ${row.id}`, deadline };
    try {
      return await this.sessions.takeTurn(turn, async (state, waited) => {
        const sameVersion = state !== null && state.version === plan.definitionVersion;
        const waiting = sameVersion ? state.waitingAt : null;
        const resume: ResumeRequest | undefined = waiting
          ? { kind: 'ask', nodeId: waiting.nodeId, answer: typeof plan.input.message === 'string' ? plan.input.message : '' }
          : undefined;
        const outcome = await this.runGraph(plan, compiled, resume, sameVersion ? state.vars : {}, waited ? Math.max(1, deadline - Date.now()) : limitMs, onStep);
        const next: BotSessionState = {
          version: plan.definitionVersion,
          vars: outcome.vars,
          waitingAt: outcome.suspension?.kind === 'ask' ? { nodeId: outcome.suspension.nodeId, saveAs: outcome.suspension.saveAs } : null,
        };
        return { state: next, result: outcome };
      });
    } catch (error) {
      if (!(error instanceof SessionTurnTimeoutError)) throw error;
      return { ...failedOutcome(plan, `Time limit of ${limitMs} ms exceeded waiting for the session's earlier messages`), status: 'TIMEOUT' };
    }
  }

  /** ONE_TIME: the run that enrolled the subject first, when it is another run; else null. */
  private async enrollmentConflict(row: InvocationRow, plan: RunPlan): Promise<string | null> {
    if (plan.enrollmentPolicy !== 'ONE_TIME' || plan.enrollmentSubject === null) return null;
    const enrolledBy = await claimEnrollment(this.dataSource, row.projectId, plan.enrollmentSubject, row.id);
    return enrolledBy && enrolledBy !== row.id ? enrolledBy : null;
  }

  private async renewLease(id: string): Promise<void> {
    try {
      await renewLease(this.dataSource, id, this.lease.owner, new Date(Date.now() + this.config.RUN_LEASE_MS));
    } catch (error) {
      this.logger.warn({ err: error, invocationId: id }, 'could not renew run lease');
    }
  }

  private logRetryOrLoss(document: InvocationDocument | null, id: string, what: string): void {
    if (document) this.logger.debug({ invocationId: id, status: document.status }, `run ${what}`);
    // The lease was lost (the sweeper judged this process dead): the run already has an ending.
    else this.logger.warn({ invocationId: id }, `run outcome (${what}) dropped: the run was ended elsewhere after its lease expired`);
  }
}

/**
 * One attempt of a run, in the trace of what started it (the request, or the scheduling request
 * a job carried): its http nodes' requests are children of this span, and the events and the
 * callback its ending writes carry its traceparent.
 */
function inRunSpan<T>(name: string, invocationId: string, plan: RunPlan, work: () => Promise<T>): Promise<T> {
  return inSpan(name, { service: 'invocation', attributes: { 'runline.invocation_id': invocationId, 'runline.run.target': plan.target, 'runline.run.mode': plan.mode } }, work);
}

/** Where a suspended run continues: after its Wait, or at its approval with the recorded decision. */
function resumeRequestOf(state: SuspendedState): ResumeRequest {
  const { suspension, steps, messages, actions, decision } = state;
  if (suspension?.kind === 'wait') return { kind: 'wait', nodeId: suspension.nodeId, steps, messages, actions };
  if (suspension?.kind === 'approval') {
    if (!decision) throw new Error('the approval has no recorded decision to resume with');
    const { decidedBy, decidedAt, comment } = decision;
    return { kind: 'approval', nodeId: suspension.nodeId, decision: decision.decision, decidedBy, decidedAt, comment, steps, messages, actions };
  }
  throw new Error('the run is not waiting at a Wait node or a decided approval');
}
