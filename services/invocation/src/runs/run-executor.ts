import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { JobKind } from '@runline/contracts';
import { retryTransient, TransactionRunner } from '@runline/db';
import {
  ENGINE_RUNTIME,
  runGraph,
  shapeRunResult,
  type CompiledDefinition,
  type JsonValue,
  type ResumeRequest,
  type RunOutcome,
  type RunPorts,
} from '@runline/engine';
import type { Logger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { InvocationEventData } from '../events/invocation-event.js';
import type { InvocationDocument } from '../events/invocation.projector.js';
import { BotSessions } from './bot-sessions.js';
import { callbackTargetOf } from './callback-request.js';
import { DefinitionCatalog } from './definition-catalog.js';
import { engineRunPorts } from './engine-ports.js';
import { transition, transitionKnown, type Expectation, type InvocationRow, type StateChange } from './invocation-store.js';
import { redactSecrets } from './redaction.js';
import { retriesAutomatically, type RunPlan } from './run-plan.js';
import { jobNames, waitForJob } from './scheduler-jobs.js';

/** The run as `endingOf` needs it. */
export type AttemptOf = Pick<InvocationRow, 'id' | 'orgId' | 'projectId' | 'attempt' | 'maxAttempts'>;

/** What ending an attempt writes, and the result for a sync caller. */
export interface Ending {
  change: StateChange & { status: 'QUEUED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'SUSPENDED' };
  events: InvocationEventData[];
  messages: BusMessage[];
  liveResult: JsonValue;
  /** What became of the run, for the log. */
  what: string;
}

/** A finished (or paused) execution: the read model after it, and the live result for a sync caller. */
export interface Execution {
  document: InvocationDocument | null;
  /** The run's result unredacted, for the caller waiting on a sync run; null when it has none. */
  liveResult: JsonValue;
}

/**
 * Executes runs: loads the compiled definition, applies ONE_TIME enrollment and bot sessions,
 * runs the engine under a lease (renewed while it runs, so a dead process's runs can be told
 * from slow ones), and records the outcome: success, failure, timeout, suspension, or, for
 * async automations with attempts left, a retry.
 */
@Injectable()
export class RunExecutor implements OnApplicationShutdown {
  /** Identifies this process as a lease owner. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly ports: RunPorts;
  private readonly heartbeats = new Set<NodeJS.Timeout>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly sessions: BotSessions,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(OutboundGuard) outbound: OutboundGuard,
  ) {
    this.ports = engineRunPorts(outbound);
  }

  onApplicationShutdown(): void {
    for (const timer of this.heartbeats) clearInterval(timer);
  }

  lease(): { owner: string; expiresAt: Date } {
    return { owner: this.owner, expiresAt: new Date(Date.now() + this.config.RUN_LEASE_MS) };
  }

  /** Runs a RUNNING invocation this process holds the lease of, to its next resting state. */
  execute(row: InvocationRow, plan: RunPlan, compiled: CompiledDefinition | null): Promise<Execution> {
    return this.underLease(row, plan, async () => {
      const definition = compiled ?? (await this.definitionFor(row, plan));
      const skipped = await this.enrollmentConflict(row, plan);
      if (skipped) return await this.finishSkipped(row, plan, skipped);
      const outcome = plan.target === 'BOT' ? await this.runBotTurn(row, plan, definition) : await this.runGraph(plan, definition);
      return await this.finish(row, plan, outcome);
    });
  }

  /** Continues a run that was SUSPENDED at a Wait node (now RUNNING under this process's lease) after the node. */
  resume(row: InvocationRow, plan: RunPlan): Promise<Execution> {
    return this.underLease(row, plan, async () => {
      if (!row.sealedResumeState) throw new Error('the suspended run kept no state to resume from');
      const state = JSON.parse(this.secrets.open(row.sealedResumeState)) as SuspendedState;
      if (state.suspension?.kind !== 'wait') throw new Error('the run is not waiting at a Wait node');
      const definition = await this.definitionFor(row, plan);
      const { steps, messages, actions } = state;
      const outcome = await this.runGraph(plan, definition, { kind: 'wait', nodeId: state.suspension.nodeId, steps, messages, actions }, state.vars);
      return await this.finish(row, plan, outcome);
    });
  }

  /**
   * Renews the lease while `work` runs. A database error that passes (a cut connection, a
   * restart) runs the attempt again after a pause instead of failing it, like an automation
   * retry would; any other unexpected error ends the attempt as failed.
   */
  private async underLease(row: InvocationRow, plan: RunPlan, work: () => Promise<Execution>): Promise<Execution> {
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
    }
  }

  /** Records the end of an attempt; see the class comment for what follows which outcome. */
  async finish(row: InvocationRow, plan: RunPlan, outcome: RunOutcome): Promise<Execution> {
    const ending = this.endingOf(row, plan, outcome);
    const expected = { status: 'RUNNING' as const, leaseOwner: this.owner };
    const document = await this.record(row, expected, ending.change, ending.events, ending.messages);
    this.logRetryOrLoss(document, row.id, ending.what);
    return { document, liveResult: ending.liveResult };
  }

  /**
   * Runs a sync run that is not recorded yet to its end, in memory: for a self-contained graph
   * (`isSelfContained`), whose run nobody outside can see until it is recorded. The caller
   * records the run once, with `endingOf` the outcome.
   */
  async runUnrecorded(plan: RunPlan, compiled: CompiledDefinition): Promise<RunOutcome> {
    try {
      return await this.runGraph(plan, compiled);
    } catch (error) {
      this.logger.error({ err: error }, 'run failed unexpectedly');
      return failedOutcome(plan, `Run could not be executed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** What ending an attempt with `outcome` writes: the state change, events and messages, and the result for a sync caller. */
  endingOf(row: AttemptOf, plan: RunPlan, outcome: RunOutcome): Ending {
    const attempt = row.attempt;
    const record = { steps: redactSecrets(outcome.steps) as unknown as JsonValue[], trace: redactSecrets(outcome.trace) as unknown as JsonValue };
    const durationMs = outcome.trace.durationMs;
    const failed = outcome.status === 'FAILED' || outcome.status === 'TIMEOUT';
    const retries = retriesAutomatically(plan);

    if (failed && retries && attempt < row.maxAttempts) {
      const retryAt = new Date(Date.now() + backoffMs(plan.retry.backoffSeconds, attempt));
      const event: InvocationEventData = {
        type: 'InvocationRetryScheduled',
        failedAttempt: attempt,
        errorMessage: outcome.errorMessage ?? 'Run failed',
        retryAt: retryAt.toISOString(),
        ...record,
      };
      const wait = waitForJob(JobKind.RETRY_RUN, jobNames.retry(row.id, attempt), row, retryAt);
      return {
        change: { status: 'QUEUED', lease: null, runAfter: retryAt, waitingJob: wait.name },
        events: [event],
        messages: [wait.command],
        liveResult: null,
        what: `retry ${attempt + 1}/${row.maxAttempts} at ${retryAt.toISOString()}`,
      };
    }

    const events: InvocationEventData[] = [];
    let status: 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'SUSPENDED';
    let sealedResumeState: string | null = null;
    let wait: { name: string; command: BusMessage } | null = null;
    const liveResult: JsonValue = failed ? null : (shapeRunResult(plan.graph, outcome) as unknown as JsonValue);
    switch (outcome.status) {
      case 'SUCCEEDED':
      case 'WAITING_FOR_INPUT':
        status = 'SUCCEEDED';
        events.push({ type: 'InvocationSucceeded', result: redactSecrets(liveResult), durationMs, ...record });
        break;
      case 'FAILED':
        status = 'FAILED';
        events.push({ type: 'InvocationFailed', errorMessage: outcome.errorMessage ?? 'Run failed', kind: 'RUN', attempt, durationMs, ...record });
        break;
      case 'TIMEOUT':
        status = 'TIMEOUT';
        events.push({ type: 'InvocationTimedOut', errorMessage: outcome.errorMessage ?? 'Run timed out', durationMs, ...record });
        break;
      case 'SUSPENDED':
        status = 'SUSPENDED';
        sealedResumeState = this.secrets.seal(
          JSON.stringify({ vars: outcome.vars, suspension: outcome.suspension, steps: outcome.steps, messages: outcome.messages, actions: outcome.actions } satisfies SuspendedState),
        );
        if (outcome.suspension?.kind === 'wait') {
          wait = waitForJob(JobKind.RESUME_RUN, jobNames.resume(row.id, outcome.steps.length), row, new Date(outcome.suspension.resumeAt));
        }
        events.push({
          type: 'InvocationSuspended',
          pendingApproval: redactSecrets(outcome.pendingApproval) as unknown as JsonValue,
          resumeAt: outcome.suspension?.kind === 'wait' ? outcome.suspension.resumeAt : null,
          steps: record.steps,
          trace: record.trace,
        });
        break;
    }
    if (failed && retries) events.push(this.exhausted(plan, attempt, outcome.errorMessage ?? 'Run failed'));
    const callback = status === 'SUSPENDED' ? undefined : callbackTargetOf(plan, this.secrets);
    return {
      change: { status, lease: null, sealedResumeState, waitingJob: wait?.name ?? null, callback },
      events,
      messages: wait ? [wait.command] : [],
      liveResult,
      what: status,
    };
  }

  /** Records the end of an attempt: one statement when this process knows the run as it is. */
  private async record(
    row: InvocationRow,
    expected: Expectation,
    change: StateChange,
    events: InvocationEventData[],
    messages: BusMessage[] = [],
  ): Promise<InvocationDocument | null> {
    // A cut connection or a server restart must not lose the outcome of a run that ran: the
    // write is retried, and is safe to repeat (it applies only to the run still RUNNING under
    // this process's lease, so a write that did commit before the error is not made twice).
    return retryTransient(
      async () => {
        if (row.known) return (await transitionKnown(this.transactions, row.known, expected, change, events, messages))?.document ?? null;
        return this.transactions.run((tx) => transition(tx, row.id, expected, change, events, messages));
      },
      { onRetry: (error, attempt) => this.logger.warn({ err: error, invocationId: row.id, attempt }, 'recording a run outcome failed for a passing reason; retrying') },
    );
  }

  /** The dead-letter event of an async automation run that failed its last attempt. */
  exhausted(plan: RunPlan, attempts: number, reason: string): InvocationEventData {
    return {
      type: 'InvocationRetriesExhausted',
      requestPayload: redactSecrets(plan.body) as Record<string, JsonValue>,
      sealedRequest: this.secrets.seal(JSON.stringify(plan.body)),
      failureReason: reason,
      attemptCount: attempts,
      triggerKey: plan.triggerKey,
    };
  }

  private async definitionFor(row: InvocationRow, plan: RunPlan): Promise<CompiledDefinition> {
    if (plan.draftDefinition !== null) return this.catalog.draft('AUTOMATION', plan.draftDefinition);
    const project = await retryTransient(() => this.catalog.project(row.projectId, { publishedVersion: plan.definitionVersion }));
    if (!project) throw new Error('project is unknown to the invocation service');
    return this.catalog.published(project);
  }

  private runGraph(plan: RunPlan, compiled: CompiledDefinition, resume?: ResumeRequest, vars?: Record<string, unknown>): Promise<RunOutcome> {
    return runGraph(
      compiled,
      {
        graph: plan.graph,
        scope: { payload: plan.payload, input: plan.input, session: plan.session, vars: vars ?? {} },
        onErrorPolicy: plan.onErrorPolicy,
        limits: {
          maxSteps: this.config.RUN_MAX_STEPS,
          timeoutMs: plan.mode === 'SYNC' ? this.config.SYNC_RUN_TIMEOUT_MS : this.config.ASYNC_RUN_TIMEOUT_MS,
        },
        ...(resume ? { resume } : {}),
      },
      this.ports,
    );
  }

  /** One message of a conversation: continue at the session's open question, or start over. */
  private async runBotTurn(row: InvocationRow, plan: RunPlan, compiled: CompiledDefinition): Promise<RunOutcome> {
    const session = plan.session;
    if (!session) throw new Error('bot run without a session');
    return this.sessions.exclusive(row.projectId, session.id, async () => {
      const state = await this.sessions.load(row.projectId, session.id);
      const sameVersion = state !== null && state.version === plan.definitionVersion;
      const waiting = sameVersion ? state.waitingAt : null;
      const resume: ResumeRequest | undefined = waiting
        ? { kind: 'ask', nodeId: waiting.nodeId, answer: typeof plan.input.message === 'string' ? plan.input.message : '' }
        : undefined;
      const outcome = await this.runGraph(plan, compiled, resume, sameVersion ? state.vars : {});
      await this.sessions.save(row.projectId, session.id, {
        version: plan.definitionVersion,
        vars: outcome.vars,
        waitingAt: outcome.suspension?.kind === 'ask' ? { nodeId: outcome.suspension.nodeId, saveAs: outcome.suspension.saveAs } : null,
      });
      return outcome;
    });
  }

  /** ONE_TIME: the run that enrolled the subject first, when it is another run; else null. */
  private async enrollmentConflict(row: InvocationRow, plan: RunPlan): Promise<string | null> {
    if (plan.enrollmentPolicy !== 'ONE_TIME' || plan.enrollmentSubject === null) return null;
    const rows: Array<{ invocation_id: string }> = await this.dataSource.query(
      `WITH inserted AS (
         INSERT INTO enrollments (project_id, subject, invocation_id) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, subject) DO NOTHING RETURNING invocation_id)
       SELECT invocation_id FROM inserted
       UNION ALL SELECT invocation_id FROM enrollments WHERE project_id = $1 AND subject = $2
       LIMIT 1`,
      [row.projectId, plan.enrollmentSubject, row.id],
    );
    const enrolledBy = rows[0]?.invocation_id;
    return enrolledBy && enrolledBy !== row.id ? enrolledBy : null;
  }

  private finishSkipped(row: InvocationRow, plan: RunPlan, enrolledBy: string): Promise<Execution> {
    const now = new Date().toISOString();
    const skip = { skipped: true, reason: `Already enrolled: ONE_TIME policy, subject "${plan.enrollmentSubject}" was enrolled by run ${enrolledBy}` };
    const outcome: RunOutcome = {
      status: 'SUCCEEDED',
      messages: [],
      actions: [],
      result: skip,
      errorMessage: null,
      steps: [],
      trace: { runtime: ENGINE_RUNTIME, graph: plan.graph, startedAt: now, completedAt: now, durationMs: 0, steps: 0 },
      vars: {},
      suspension: null,
      pendingApproval: null,
    };
    // A flow's result is { messages, actions }: the skip note goes beside them.
    if (plan.graph === 'flow') return this.finishWithResult(row, plan, outcome, { messages: [], actions: [], ...skip });
    return this.finish(row, plan, outcome);
  }

  private async finishWithResult(row: InvocationRow, plan: RunPlan, outcome: RunOutcome, result: JsonValue): Promise<Execution> {
    const callback = callbackTargetOf(plan, this.secrets);
    const document = await this.record(row, { status: 'RUNNING', leaseOwner: this.owner }, { status: 'SUCCEEDED', lease: null, callback }, [
      { type: 'InvocationSucceeded', result, durationMs: 0, steps: [], trace: outcome.trace as unknown as JsonValue },
    ]);
    return { document, liveResult: result };
  }

  private async renewLease(id: string): Promise<void> {
    try {
      await this.dataSource.query(
        `UPDATE invocations SET lease_expires_at = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'RUNNING'`,
        [id, this.owner, new Date(Date.now() + this.config.RUN_LEASE_MS)],
      );
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

/** What a suspended run keeps (sealed) to continue from. */
interface SuspendedState {
  vars: Record<string, unknown>;
  suspension: RunOutcome['suspension'];
  steps: RunOutcome['steps'];
  messages: RunOutcome['messages'];
  actions: RunOutcome['actions'];
}

/** Exponential: backoffSeconds before the first retry, doubling after each further failure. */
export function backoffMs(backoffSeconds: number, failedAttempt: number): number {
  return Math.round(backoffSeconds * 1000 * 2 ** Math.max(0, failedAttempt - 1));
}

/** An outcome for a run that could not even start (definition missing, engine refused the request). */
export function failedOutcome(plan: RunPlan, errorMessage: string): RunOutcome {
  const now = new Date().toISOString();
  return {
    status: 'FAILED',
    messages: [],
    actions: [],
    result: null,
    errorMessage,
    steps: [],
    trace: { runtime: ENGINE_RUNTIME, graph: plan.graph, startedAt: now, completedAt: now, durationMs: 0, steps: 0 },
    vars: {},
    suspension: null,
    pendingApproval: null,
  };
}
