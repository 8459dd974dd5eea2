import { randomUUID } from 'node:crypto';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampDate,
  timestampFromDate,
  toBinary,
  type StartInvocationReply,
  type StartInvocationRequest,
} from '@runline/contracts';
import { isTransientDatabaseError, TransactionRunner } from '@runline/db';
import type { CompiledDefinition, JsonValue, RunOutcome } from '@runline/engine';
import { redactSecrets, type Logger } from '@runline/observability';
import { Gauge, type Registry } from 'prom-client';
import { LOGGER, METRICS_REGISTRY, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { RequestInfo, RunModeName, TargetType } from '../lifecycle/invocation-event.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import type { QuotaFigures } from '../lifecycle/monthly-quota.js';
import { endingOf, type Ending } from '../lifecycle/run-endings.js';
import { endedFirstRecordOf, endsInFirstRecord, firstRecordOf, recordsOnceEnded, type EndedRunTimes } from '../lifecycle/run-lifecycle.js';
import { withHistory } from '../lifecycle/run-history.js';
import { checkTrigger, GRAPH_OF_TARGET, planRun, retriesAutomatically, type BotSessionRef, type RunPlan, type TriggerValidation } from '../lifecycle/run-plan.js';
import { DefinitionCatalog, DefinitionUnavailableError, StaleProjectCopyError, type ProjectCopy } from '../runs/definition-catalog.js';
import type { IdempotencyKey, NewInvocation } from '../runs/new-runs.repository.js';
import { RunExecutor } from '../runs/run-executor.js';
import { RunLease } from '../runs/run-lease.js';
import { keyTakenAt, readDocument } from '../runs/run-reads.repository.js';
import { RunRecorder } from '../runs/run-recorder.js';
import { RunSlots } from '../runs/run-slots.js';

const TARGETS: Partial<Record<RunTarget, TargetType>> = {
  [RunTarget.BOT]: 'BOT',
  [RunTarget.FLOW]: 'FLOW',
  [RunTarget.AUTOMATION]: 'AUTOMATION',
};

/**
 * How long an async run of a self-contained graph may run while its request waits for the 202
 * (`runAsyncThenRecord`); one that needs longer runs from the queue instead.
 */
export const ASYNC_INLINE_RUN_MS = 20;

/** A new run as recorded, before its first record's status, events and messages. */
type NewRunBase = Omit<NewInvocation, 'status' | 'attempt' | 'lease' | 'waitingJob' | 'events' | 'messages' | 'history'>;

/** Our message (the spec has none): answered 503; retry with the same idempotency key. */
export const DATABASE_UNAVAILABLE = 'The run could not be recorded right now; retry with the same idempotency key';

/**
 * Starts runs for the gateway (request/reply). Async: the run is recorded QUEUED, with its
 * RunInvocation command in the outbox, before the reply; with a start time (runAt,
 * delaySeconds) it is recorded SCHEDULED with a ScheduleJob command for the scheduler instead.
 * Sync: recorded RUNNING, executed here, and the reply carries the result. A run of a
 * self-contained graph that starts now (sync, or async up to ASYNC_INLINE_RUNS at once) is
 * executed first and recorded once, ended. The lifecycle core
 * decides what is recorded (`firstRecordOf`), the recorder writes it with the monthly quota
 * counted; an idempotency key already used answers with the earlier run.
 */
@Controller()
export class StartInvocationHandler {
  /** Async runs executed as their requests wait (`runAsyncThenRecord`), until written. */
  private readonly inlineRuns: RunSlots;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly recorder: RunRecorder,
    private readonly executor: RunExecutor,
    private readonly lease: RunLease,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
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

  @MessagePattern(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(StartInvocationRequestSchema, data);
    let reply: StartInvocationReply;
    try {
      reply = await this.start(request);
    } catch (error) {
      if (!isTransientDatabaseError(error)) throw error;
      // Nothing was recorded, or the client's retry with the same idempotency key finds what was.
      this.logger.warn({ err: error }, 'StartInvocation met a passing database error; answered unavailable');
      reply = create(StartInvocationReplySchema, { unavailableReason: DATABASE_UNAVAILABLE });
    }
    return toBinary(StartInvocationReplySchema, reply);
  }

  private async start(request: StartInvocationRequest): Promise<StartInvocationReply> {
    const target = TARGETS[request.target];
    const mode: RunModeName | undefined = request.mode === RunMode.SYNC ? 'SYNC' : request.mode === RunMode.ASYNC ? 'ASYNC' : undefined;
    if (!target || !mode) throw new Error('StartInvocation needs a target and a mode');
    const body = JSON.parse(request.bodyJson || '{}') as Record<string, unknown>;
    const session = target === 'BOT' ? sessionOf(body) : null;

    let project: ProjectCopy | null;
    try {
      // Never older than the state the sender was answered from (its config_version).
      project = await this.catalog.project(request.projectId, { configVersion: Number(request.configVersion), publishedVersion: request.publishedVersion });
    } catch (error) {
      if (!(error instanceof StaleProjectCopyError)) throw error;
      return create(StartInvocationReplySchema, { unavailableReason: 'The latest change of the project has not reached the invocation service yet' });
    }
    if (!project) return create(StartInvocationReplySchema, { unavailableReason: 'The project is not known to the invocation service yet' });
    if (project.deleted) return create(StartInvocationReplySchema, { unavailableReason: 'The project was deleted' });

    const draft = target === 'AUTOMATION' && mode === 'SYNC' && body.runtimeStage === 'app' ? request.draftDefinitionJson : '';
    let compiled: CompiledDefinition | null = null;
    let unavailable: string | null = null;
    try {
      compiled = draft ? this.catalog.draft('AUTOMATION', draft) : await this.catalog.published(project);
    } catch (error) {
      if (!(error instanceof DefinitionUnavailableError)) throw error;
      unavailable = error.message;
    }

    const plan = compiled
      ? await planRun({
          target,
          mode,
          body,
          compiled,
          definitionVersion: draft ? 0 : project.publishedVersion,
          draftDefinition: draft || null,
          project,
          session,
        })
      : fallbackPlan(target, mode, body, project, session);
    const validation: TriggerValidation | null = compiled && target !== 'BOT' ? checkTrigger(plan, compiled) : null;

    if (body.dryRun === true && target !== 'BOT') {
      const checked = validation ?? { valid: false, expectedKeys: [], actualKeys: Object.keys(plan.payload), missingKeys: [], errors: [unavailable ?? ''] };
      return create(StartInvocationReplySchema, {
        dryRun: true,
        status: checked.valid ? 'VALID' : 'INVALID',
        resultJson: JSON.stringify({ validation: checked }),
      });
    }

    const id = randomUUID();
    const now = request.receivedAt ? timestampDate(request.receivedAt) : new Date();
    // Only async flow and automation triggers may be scheduled; the gateway drops the fields elsewhere.
    const runAt = request.runAt && mode === 'ASYNC' && target !== 'BOT' ? timestampDate(request.runAt) : null;
    const info = requestInfo(request, plan, project, draft !== '', runAt !== null);
    // A scheduled run is not checked against the Trigger node (spec: validate with dryRun when scheduling).
    const rejection = unavailable ?? (validation && !validation.valid && runAt === null ? validation.errors.join('; ') : null);
    const base = {
      id,
      orgId: request.orgId,
      projectId: request.projectId,
      targetType: target,
      mode,
      maxAttempts: info.maxAttempts,
      sealedPlan: this.secrets.seal(JSON.stringify(plan)),
      occurredAt: now,
      idempotency: request.idempotencyKey ? { projectId: request.projectId, targetType: target, mode, key: request.idempotencyKey } : null,
    };
    const startsNow = rejection === null && runAt === null;
    const sync = startsNow && mode === 'SYNC';
    if (startsNow && compiled && recordsOnceEnded(plan, compiled)) {
      const reply = sync ? await this.runThenRecord(base, info, plan, compiled, session) : await this.runAsyncThenRecord(base, info, plan, compiled);
      if (reply) return reply;
    }
    const item: NewInvocation = withHistory({ ...base, ...firstRecordOf(base, { mode, info, rejection, runAt, lease: () => this.lease.next() }) });

    const settled = await this.record(item);
    if ('reply' in settled) return settled.reply;
    const recorded = settled.document;
    if (!sync) {
      const reply = answer(id, recorded.status, null, recorded.errorMessage, session);
      if (recorded.scheduledFor !== null) reply.scheduledFor = timestampFromDate(new Date(recorded.scheduledFor));
      return reply;
    }

    // Just recorded by this process: its first transition can be one statement.
    const known = { id, orgId: item.orgId, projectId: item.projectId, sequence: item.events.length, document: recorded };
    const execution = await this.executor.execute({ ...item, sealedResumeState: null, known }, plan, compiled);
    const document = execution.document ?? (await readDocument(this.transactions.dataSource.manager, id));
    if (!document) throw new Error(`run ${id} has no read model`);
    return answer(id, document.status, execution.liveResult, document.errorMessage, session);
  }

  /**
   * A sync run of a self-contained graph (no outside call, no pause) is executed first and
   * recorded once it has ended: one write instead of two. Nothing of it is visible outside
   * before that write, so a crash meanwhile leaves no trace and the client gets no answer, as if
   * the request had not arrived; a quota refusal or a taken idempotency key found at the write
   * answers as usual and the outcome is dropped.
   */
  private async runThenRecord(base: NewRunBase, info: RequestInfo, plan: RunPlan, compiled: CompiledDefinition, session: BotSessionRef | null): Promise<StartInvocationReply> {
    const outcome = await this.executor.runUnrecorded(plan, compiled, base.id);
    const ending = endingOf({ ...base, attempt: 1 }, plan, outcome, this.secrets);
    const settled = await this.recordEnded(base, info, plan, outcome, ending, { acceptedAt: base.occurredAt, startedAt: base.occurredAt, endedAt: new Date() });
    if ('reply' in settled) return settled.reply;
    return answer(base.id, settled.document.status, ending.liveResult, settled.document.errorMessage, session);
  }

  /**
   * An async run of a self-contained graph is executed as its request waits and recorded once,
   * ended: queued, started and ended in one write, with no start command, no claim and no second
   * write (bench/README.md, "Session 12"). The 202 still says QUEUED (the spec's answer; the
   * run's later states are read with GET). Null when the run is to be recorded QUEUED as usual
   * instead: ASYNC_INLINE_RUNS are in progress already (each counted until its write), the run
   * needed more than ASYNC_INLINE_RUN_MS (it runs again from the queue under its full limit; it
   * changed nothing), or it did not end (a retry). These runs hold no RUN_CONCURRENCY slot: the
   * slots bound runs that wait on the outside world, and a queued backlog holding all of them
   * must not send every new run the costlier way.
   */
  private async runAsyncThenRecord(base: NewRunBase, info: RequestInfo, plan: RunPlan, compiled: CompiledDefinition): Promise<StartInvocationReply | null> {
    if (!this.inlineRuns.tryAcquire()) return null;
    try {
      const limitMs = this.executor.timeLimitMs('ASYNC');
      const budgetMs = Math.min(limitMs, ASYNC_INLINE_RUN_MS);
      const startedAt = new Date();
      const outcome = await this.executor.runUnrecorded(plan, compiled, base.id, budgetMs);
      if (outcome.status === 'TIMEOUT' && budgetMs < limitMs) {
        this.logger.debug({ invocationId: base.id, budgetMs }, 'async run needed more than a request may wait for it; it runs from the queue');
        return null;
      }
      const ending = endingOf({ ...base, attempt: 1 }, plan, outcome, this.secrets);
      if (!endsInFirstRecord(ending)) return null;
      const settled = await this.recordEnded(base, info, plan, outcome, ending, { acceptedAt: base.occurredAt, startedAt, endedAt: new Date() });
      if ('reply' in settled) return settled.reply;
      return answer(base.id, 'QUEUED', null, null, null);
    } finally {
      this.inlineRuns.release();
    }
  }

  /** Records a run executed before it was recorded, ended with `ending` (`record`'s answer); its attempt is timed once written. */
  private async recordEnded(
    base: NewRunBase,
    info: RequestInfo,
    plan: RunPlan,
    outcome: RunOutcome,
    ending: Ending,
    times: EndedRunTimes,
  ): Promise<{ document: InvocationDocument } | { reply: StartInvocationReply }> {
    const settled = await this.record(withHistory({ ...base, ...endedFirstRecordOf(info, ending, times) }));
    if (!('reply' in settled)) this.executor.countUnrecordedAttempt(plan, ending.change.status, outcome);
    return settled;
  }

  /** Records a new run (group commit); a refusal or an idempotent replay comes back as the reply. */
  private async record(item: NewInvocation): Promise<{ document: InvocationDocument } | { reply: StartInvocationReply }> {
    const outcome = await this.recorder.record(item);
    if ('quotaExceeded' in outcome) return { reply: quotaExceededReply(outcome.quotaExceeded) };
    if ('quotaUnavailable' in outcome) {
      this.logger.warn({ orgId: item.orgId, reason: outcome.quotaUnavailable }, 'monthly quota could not be checked; request refused');
      return { reply: create(StartInvocationReplySchema, { quotaUnavailable: true }) };
    }
    if (!outcome.created) return { reply: await this.replay(outcome.existingId, item.idempotency) };
    return { document: outcome.document };
  }

  /** An earlier request with the same key made this run: its stored state, marked as a replay. */
  private async replay(invocationId: string, key: IdempotencyKey | null): Promise<StartInvocationReply> {
    const manager = this.transactions.dataSource.manager;
    const [document, takenAt] = await Promise.all([readDocument(manager, invocationId), key ? keyTakenAt(manager, key) : null]);
    if (!document) throw new Error(`idempotent replay: run ${invocationId} has no read model`);
    const reply = answer(invocationId, document.status, document.result, document.errorMessage, null);
    reply.idempotentReplay = true;
    if (document.scheduledFor !== null) reply.scheduledFor = timestampFromDate(new Date(document.scheduledFor));
    if (takenAt) reply.keyTakenAt = timestampFromDate(takenAt);
    reply.sessionId = document.sessionId ?? '';
    this.logger.debug({ invocationId }, 'idempotent replay');
    return reply;
  }
}

function answer(invocationId: string, status: string, result: JsonValue, errorMessage: string | null, session: BotSessionRef | null): StartInvocationReply {
  return create(StartInvocationReplySchema, {
    invocationId,
    status,
    resultJson: result === null ? '' : JSON.stringify(result),
    errorMessage: errorMessage ?? '',
    sessionId: session?.id ?? '',
  });
}

/** Nothing was recorded: the organization's quota for the period is used up. */
function quotaExceededReply(figures: QuotaFigures): StartInvocationReply {
  return create(StartInvocationReplySchema, {
    quotaExceeded: { limit: BigInt(figures.limit), used: BigInt(figures.used), periodStart: timestampFromDate(figures.periodStart) },
  });
}

/** Bots: sessionId, else userId, else a new random session. */
function sessionOf(body: Record<string, unknown>): BotSessionRef {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return {
    id: text(body.sessionId) ?? text(body.userId) ?? randomUUID(),
    userId: text(body.userId),
    userName: text(body.userName),
    platform: text(body.platform),
  };
}

function requestInfo(request: StartInvocationRequest, plan: RunPlan, project: ProjectCopy, draft: boolean, scheduled: boolean): RequestInfo {
  return {
    targetType: plan.target,
    mode: plan.mode,
    // Polled items and dead-letter replays say where they came from; API calls leave it empty.
    triggerSource: request.triggerSource === 'POLLING' || request.triggerSource === 'REPLAY' ? request.triggerSource : scheduled ? 'SCHEDULE' : 'WEBHOOK',
    environment: draft ? 'TEST' : 'PRODUCTION',
    requestPayload: redactSecrets(plan.body) as Record<string, JsonValue>,
    enrollmentPolicy: plan.enrollmentPolicy,
    onErrorPolicy: plan.onErrorPolicy,
    startedByTokenId: request.tokenId || null,
    definitionVersion: draft ? 0 : project.publishedVersion,
    sessionId: plan.session?.id ?? null,
    maxAttempts: retriesAutomatically(plan) ? plan.retry.maxAttempts : 1,
  };
}

/** The plan of a request that will not run (no definition): recorded with the project's defaults. */
function fallbackPlan(target: TargetType, mode: RunModeName, body: Record<string, unknown>, project: ProjectCopy, session: BotSessionRef | null): RunPlan {
  return {
    target,
    graph: GRAPH_OF_TARGET[target],
    mode,
    definitionVersion: project.publishedVersion,
    draftDefinition: null,
    body,
    payload: {},
    input: {},
    session,
    enrollmentPolicy: target === 'BOT' ? null : project.defaultEnrollmentPolicy,
    enrollmentSubject: null,
    onErrorPolicy: project.defaultOnErrorPolicy,
    callback: { url: null, secret: null },
    retry: { maxAttempts: 1, backoffSeconds: 0 },
    triggerKey: 'external_event',
  };
}
