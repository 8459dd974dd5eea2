import { randomUUID } from 'node:crypto';
import { Controller, Inject, type OnModuleInit } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  JobKind,
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
import { GroupCommit, isTransientDatabaseError, TransactionRunner } from '@runline/db';
import type { CompiledDefinition, JsonValue } from '@runline/engine';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import type { InvocationEventData, RequestInfo, RunModeName, TargetType } from '../events/invocation-event.js';
import { DefinitionCatalog, DefinitionUnavailableError, StaleProjectCopyError, type ProjectCopy } from '../runs/definition-catalog.js';
import { insertInvocationsAtOnce, readDocument, type NewInvocation } from '../runs/invocation-store.js';
import type { InvocationDocument } from '../events/invocation.projector.js';
import { recordWithinQuota, type QuotaFigures, type QuotaOutcome } from '../runs/quota-ledger.js';
import { redactSecrets } from '../runs/redaction.js';
import { runInvocationCommand } from '../runs/run-commands.js';
import { RunExecutor } from '../runs/run-executor.js';
import { jobNames, waitForJob } from '../runs/scheduler-jobs.js';
import { checkTrigger, GRAPH_OF_TARGET, planRun, retriesAutomatically, type BotSessionRef, type RunPlan, type TriggerValidation } from '../runs/run-plan.js';

/** How long an organization seen with a quota skips the one-statement path. */
const QUOTA_HINT_MS = 10_000;

const TARGETS: Partial<Record<RunTarget, TargetType>> = {
  [RunTarget.BOT]: 'BOT',
  [RunTarget.FLOW]: 'FLOW',
  [RunTarget.AUTOMATION]: 'AUTOMATION',
};

/** Our message (the spec has none): answered 503; retry with the same idempotency key. */
export const DATABASE_UNAVAILABLE = 'The run could not be recorded right now; retry with the same idempotency key';

/**
 * Starts runs for the gateway (request/reply). Async: the run is recorded QUEUED, with its
 * RunInvocation command in the outbox, before the reply; with a start time (runAt,
 * delaySeconds) it is recorded SCHEDULED with a ScheduleJob command for the scheduler instead.
 * Sync: recorded RUNNING, executed here, and the reply carries the result. New runs of concurrent requests share transactions (group
 * commit); an idempotency key already used answers with the earlier run.
 */
@Controller()
export class StartInvocationHandler implements OnModuleInit {
  private commit!: GroupCommit<NewInvocation, QuotaOutcome>;
  /** Organizations last seen with a monthly quota, until when (ms): their batches skip the one-statement attempt. */
  private readonly quotaBoundUntil = new Map<string, number>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly executor: RunExecutor,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    // Two transactions in flight: while one commits, the next batch fills (larger batches, fewer
    // commits per run than with more parallel transactions; bench/README.md).
    // The monthly quota is checked and counted in the transaction that records the runs.
    this.commit = new GroupCommit((items) => this.writeBatch(items), 2);
  }

  /**
   * One statement for the runs of organizations without a monthly quota (the usual case); a
   * transaction that counts the quota under a lock for the others. Organizations seen with a
   * quota go straight to the transaction for a while, so their runs do not pay for both.
   */
  private async writeBatch(items: NewInvocation[]): Promise<QuotaOutcome[]> {
    const now = Date.now();
    const hinted = (item: NewInvocation) => (this.quotaBoundUntil.get(item.orgId) ?? 0) > now;
    const counted = items.filter(hinted);
    let free = items.filter((item) => !hinted(item));
    const outcomes = new Map<NewInvocation, QuotaOutcome>();
    if (free.length > 0) {
      const written = await insertInvocationsAtOnce(this.transactions, free);
      if ('outcomes' in written) {
        free.forEach((item, index) => outcomes.set(item, written.outcomes[index]!));
        free = [];
      } else {
        this.rememberQuotaBound(written.quotaBound, now);
      }
    }
    const rest = [...counted, ...free];
    if (rest.length > 0) {
      const results = await this.transactions.run((tx) => recordWithinQuota(tx, rest));
      rest.forEach((item, index) => outcomes.set(item, results[index]!));
    }
    return items.map((item) => outcomes.get(item)!);
  }

  /** Hints that these organizations have a quota; the hints of others, expired, are dropped. */
  private rememberQuotaBound(orgIds: readonly string[], now: number): void {
    for (const [orgId, until] of this.quotaBoundUntil) if (until <= now) this.quotaBoundUntil.delete(orgId);
    for (const orgId of orgIds) this.quotaBoundUntil.set(orgId, now + QUOTA_HINT_MS);
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
    let item: NewInvocation;
    if (rejection !== null) {
      const failed: InvocationEventData = {
        type: 'InvocationFailed',
        errorMessage: rejection,
        kind: 'TRIGGER_CHECK',
        attempt: 0,
        request: info,
        steps: [],
        trace: null,
        durationMs: 0,
      };
      item = { ...base, status: 'FAILED', attempt: 0, lease: null, waitingJob: null, events: [failed], messages: [] };
    } else if (runAt !== null) {
      const wait = waitForJob(JobKind.START_RUN, jobNames.start(id), base, runAt);
      const scheduled: InvocationEventData = { type: 'InvocationScheduled', request: info, scheduledFor: runAt.toISOString(), schedulerJobName: wait.name };
      item = { ...base, status: 'SCHEDULED', attempt: 0, lease: null, waitingJob: wait.name, events: [scheduled], messages: [wait.command] };
    } else if (mode === 'ASYNC') {
      const queued: InvocationEventData = { type: 'InvocationQueued', request: info };
      item = { ...base, status: 'QUEUED', attempt: 0, lease: null, waitingJob: null, events: [queued], messages: [runInvocationCommand(base)] };
    } else {
      const started: InvocationEventData = { type: 'InvocationStarted', attempt: 1, request: info };
      if (compiled && recordsOnceEnded(plan, compiled)) return this.runThenRecord(base, started, plan, compiled, session);
      item = { ...base, status: 'RUNNING', attempt: 1, lease: this.executor.lease(), waitingJob: null, events: [started], messages: [] };
    }

    const settled = await this.record(item);
    if ('reply' in settled) return settled.reply;
    const recorded = settled.document;
    if (rejection !== null || mode === 'ASYNC') {
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
  private async runThenRecord(
    base: Omit<NewInvocation, 'status' | 'attempt' | 'lease' | 'waitingJob' | 'events' | 'messages'>,
    started: InvocationEventData,
    plan: RunPlan,
    compiled: CompiledDefinition,
    session: BotSessionRef | null,
  ): Promise<StartInvocationReply> {
    const outcome = await this.executor.runUnrecorded(plan, compiled);
    const ending = this.executor.endingOf({ ...base, attempt: 1 }, plan, outcome);
    const endedAt = new Date();
    const settled = await this.record({
      ...base,
      status: ending.change.status,
      attempt: 1,
      lease: null,
      waitingJob: null,
      events: [started, ...ending.events],
      eventTimes: [base.occurredAt, ...ending.events.map(() => endedAt)],
      messages: ending.messages,
    });
    if ('reply' in settled) return settled.reply;
    return answer(base.id, settled.document.status, ending.liveResult, settled.document.errorMessage, session);
  }

  /** Records a new run (group commit); a refusal or an idempotent replay comes back as the reply. */
  private async record(item: NewInvocation): Promise<{ document: InvocationDocument } | { reply: StartInvocationReply }> {
    const outcome = await this.commit.submit(item);
    if ('quotaExceeded' in outcome) return { reply: quotaExceededReply(outcome.quotaExceeded) };
    if ('quotaUnavailable' in outcome) {
      this.logger.warn({ orgId: item.orgId, reason: outcome.quotaUnavailable }, 'monthly quota could not be checked; request refused');
      return { reply: create(StartInvocationReplySchema, { quotaUnavailable: true }) };
    }
    if (!outcome.created) return { reply: await this.replay(outcome.existingId) };
    return { document: outcome.document };
  }

  /** An earlier request with the same key made this run: its stored state, marked as a replay. */
  private async replay(invocationId: string): Promise<StartInvocationReply> {
    const document = await readDocument(this.transactions.dataSource.manager, invocationId);
    if (!document) throw new Error(`idempotent replay: run ${invocationId} has no read model`);
    const reply = answer(invocationId, document.status, document.result, document.errorMessage, null);
    reply.idempotentReplay = true;
    if (document.scheduledFor !== null) reply.scheduledFor = timestampFromDate(new Date(document.scheduledFor));
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

/**
 * Whether a sync run may be executed before it is recorded (`runThenRecord`): its graph is
 * self-contained, and it writes nothing else on the way (a bot turn saves its session; a
 * ONE_TIME enrollment is claimed before the run).
 */
function recordsOnceEnded(plan: RunPlan, compiled: CompiledDefinition): boolean {
  if (plan.mode !== 'SYNC' || plan.target === 'BOT') return false;
  if (plan.enrollmentPolicy === 'ONE_TIME' && plan.enrollmentSubject !== null) return false;
  return compiled.graphs[plan.graph]?.selfContained === true;
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
    // Polled items and dead-letter replays say so (issue 6); API calls leave it empty.
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
