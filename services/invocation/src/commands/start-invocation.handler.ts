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
import type { CompiledDefinition, JsonValue } from '@runline/engine';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { RunModeName, TargetType } from '../lifecycle/invocation-event.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import type { QuotaFigures } from '../lifecycle/monthly-quota.js';
import { endedFirstRecordOf, firstRecordOf, heldSyncRecordOf, recordsOnceEnded, waitTimedOut } from '../lifecycle/run-lifecycle.js';
import { withHistory } from '../lifecycle/run-history.js';
import { scheduleFireOf } from '../lifecycle/schedule-fires.js';
import {
  checkTrigger,
  compileDraft,
  DefinitionUnavailableError,
  fallbackPlan,
  planRun,
  requestInfo,
  type BotSessionRef,
  type TriggerValidation,
} from '../lifecycle/run-plan.js';
import { DefinitionCatalog, StaleProjectCopyError, type ProjectCopy } from '../runs/definition-catalog.js';
import type { NewInvocation } from '../runs/new-runs.repository.js';
import { RunExecutor } from '../runs/run-executor.js';
import { FlowControl } from '../runs/run-flow-control.js';
import { RunLease } from '../runs/run-lease.js';
import { RunStarter } from '../runs/run-starter.js';
import { readDocument } from '../runs/run-reads.repository.js';
import { RunRecorder, type EarlierRun } from '../runs/run-recorder.js';

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
 * Sync: recorded RUNNING, executed here, and the reply carries the result. A run of a
 * self-contained graph that starts now (sync, or async up to ASYNC_INLINE_RUNS at once) is
 * executed first and recorded once, ended (`RunExecutor.runBeforeRecording`); an async one is
 * still answered QUEUED, with its end beside it (`ended_run`) for a `Prefer: wait` answer.
 *
 * One way through: the lifecycle core plans the run (`run-plan.ts`) and decides what is
 * recorded (`firstRecordOf`, `endedFirstRecordOf`), the recorder writes it with the monthly
 * quota counted (an idempotency key already used gives the earlier run), and only then is the
 * reply built here.
 */
@Controller()
export class StartInvocationHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly recorder: RunRecorder,
    private readonly executor: RunExecutor,
    private readonly lease: RunLease,
    private readonly starter: RunStarter,
    private readonly flow: FlowControl,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

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
      compiled = draft ? compileDraft('AUTOMATION', draft) : await this.catalog.published(project);
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
    const fire = scheduleFireOf(request);
    const info = requestInfo(request, plan, project, draft !== '', runAt !== null, fire);
    // A scheduled run, and a schedule's fire, is not checked against the Trigger node (spec: validate with dryRun when scheduling).
    const rejection = unavailable ?? (validation && !validation.valid && runAt === null && fire === null ? validation.errors.join('; ') : null);
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
    // A sync run under flow control (its trigger's, its project's maxConcurrentRuns) starts through its gate, waiting within its deadline.
    const gated = target !== 'BOT' && ((!draft && compiled?.graphs[plan.graph]?.trigger?.flowControl !== undefined) || project.maxConcurrentRuns !== null);
    const held = sync && gated;
    // A fire while the master switch is off is recorded QUEUED and fails as it comes up (DESIGN section 12), so it is not run inline.
    // Null: not run inline, or an async run that is recorded QUEUED as usual after all.
    const ran =
      startsNow && !gated && compiled && recordsOnceEnded(plan, compiled) && (fire === null || project.externalApiEnabled)
        ? await this.executor.runBeforeRecording({ ...base, attempt: 1 }, plan, compiled)
        : null;
    const item: NewInvocation = withHistory({
      ...base,
      ...(ran
        ? endedFirstRecordOf(info, ran.ending, ran.times)
        : held
          ? heldSyncRecordOf(info)
          : firstRecordOf(base, { mode, info, rejection, runAt, lease: () => this.lease.next(id) })),
    });

    // A run executed inline keeps its slot until written (or its write failed).
    const settled = await this.recorder.record(item).finally(() => ran?.release());
    if (ran && settled.created) this.executor.countUnrecordedAttempt(plan, ran);
    if ('quotaExceeded' in settled) return quotaExceededReply(settled.quotaExceeded);
    if ('quotaUnavailable' in settled) {
      this.logger.warn({ orgId: item.orgId, reason: settled.quotaUnavailable }, 'monthly quota could not be checked; request refused');
      return create(StartInvocationReplySchema, { quotaUnavailable: true });
    }
    if (!settled.created) {
      this.logger.debug({ invocationId: settled.earlier.document.invocationId }, 'idempotent replay');
      return replayReply(settled.earlier);
    }
    const recorded = settled.document;
    if (ran) return sync ? answer(id, recorded.status, ran.ending.liveResult, recorded.errorMessage, session) : endedInlineReply(recorded);
    if (!sync) {
      const reply = answer(id, recorded.status, null, recorded.errorMessage, session);
      if (recorded.scheduledFor !== null) reply.scheduledFor = timestampFromDate(new Date(recorded.scheduledFor));
      return reply;
    }

    if (held) return this.awaitHeld(id, now, session);

    // Just recorded by this process: its first transition can be one statement.
    const known = { id, orgId: item.orgId, projectId: item.projectId, sequence: item.events.length, document: recorded };
    const execution = await this.executor.execute({ ...item, sealedResumeState: null, known }, plan, compiled);
    const document = execution.document ?? (await readDocument(this.transactions.dataSource.manager, id));
    if (!document) throw new Error(`run ${id} has no read model`);
    return answer(id, document.status, execution.liveResult, document.errorMessage, session);
  }

  /**
   * A sync run under flow control (DESIGN section 13): it starts when its gate lets it (here, or
   * through the FlowDispatcher of any replica) and the request waits for its end. If it has not
   * started by SYNC_RUN_TIMEOUT_MS after the request came, it ends TIMEOUT without running.
   * The request looks at its run again when this process's execution of it stops (at once: the
   * run took a slot freed here, by this request or by this process's dispatcher), at its
   * deadline, and every HELD_LOOK_MS meanwhile, for a run started and ended by another replica.
   */
  private async awaitHeld(id: string, receivedAt: Date, session: BotSessionRef | null): Promise<StartInvocationReply> {
    const deadline = receivedAt.getTime() + this.config.SYNC_RUN_TIMEOUT_MS;
    await this.starter.start(id, { status: 'QUEUED', dispatched: true }, () => Promise.resolve());
    for (;;) {
      const document = await readDocument(this.transactions.dataSource.manager, id);
      if (!document) throw new Error(`run ${id} has no read model`);
      if (document.status !== 'QUEUED' && document.status !== 'RUNNING') return answer(id, document.status, document.result, document.errorMessage, session);
      const untilDeadline = deadline - Date.now();
      if (document.status === 'QUEUED' && untilDeadline <= 0) {
        const ended = await this.flow.endWaiting(id, waitTimedOut());
        if (ended) return answer(id, ended.status, null, ended.errorMessage, session);
      }
      await this.flow.stoppedOrAfter(id, document.status === 'QUEUED' && untilDeadline > 0 ? Math.min(HELD_LOOK_MS, untilDeadline) : HELD_LOOK_MS);
    }
  }
}

/**
 * How often a sync request under flow control looks at its run while nothing here says it
 * stopped: the run may start and end on another replica.
 */
const HELD_LOOK_MS = 50;

function answer(invocationId: string, status: string, result: JsonValue, errorMessage: string | null, session: BotSessionRef | null): StartInvocationReply {
  return create(StartInvocationReplySchema, {
    invocationId,
    status,
    resultJson: result === null ? '' : JSON.stringify(result),
    errorMessage: errorMessage ?? '',
    sessionId: session?.id ?? '',
  });
}

/**
 * An async run executed inline, recorded ended: still QUEUED, as the spec's 202 says (its later
 * states are read with GET), with its end as recorded for a `Prefer: wait` answer, which would
 * otherwise read the run right after this reply.
 */
function endedInlineReply(recorded: InvocationDocument): StartInvocationReply {
  return create(StartInvocationReplySchema, {
    invocationId: recorded.invocationId,
    status: 'QUEUED',
    endedRun: {
      status: recorded.status,
      resultJson: recorded.result === null ? '' : JSON.stringify(recorded.result),
      errorMessage: recorded.errorMessage ?? '',
    },
  });
}

/** An earlier request with the same key made this run: its stored state, marked as a replay. */
function replayReply(earlier: EarlierRun): StartInvocationReply {
  const { document, keyTakenAt } = earlier;
  const reply = answer(document.invocationId, document.status, document.result, document.errorMessage, null);
  reply.idempotentReplay = true;
  if (document.scheduledFor !== null) reply.scheduledFor = timestampFromDate(new Date(document.scheduledFor));
  if (keyTakenAt) reply.keyTakenAt = timestampFromDate(keyTakenAt);
  reply.sessionId = document.sessionId ?? '';
  return reply;
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
