import { isUnanswered } from '@runline/bus';
import { Inject, Injectable } from '@nestjs/common';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  QUOTA_EXCEEDED_MESSAGE,
  QUOTA_UNAVAILABLE_MESSAGE,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampDate,
  timestampFromDate,
  toBinary,
  type StartInvocationReply,
} from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import type { Caller } from '../platform/access/caller.js';
import { GatewayConfig } from '../config.js';
import type { Refusal } from '../platform/errors/domain-error.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { RUN_MESSAGES } from './run-messages.js';
import { ProjectRepository } from '../platform/store/project.repository.js';
import { schedulingFieldsOf } from './scheduling-fields.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

export type TargetName = 'BOT' | 'FLOW' | 'AUTOMATION';
export type RunModeName = 'SYNC' | 'ASYNC';

export interface StartRunCommand {
  caller: Pick<Caller, 'tokenId' | 'orgId' | 'projectId' | 'publishedVersion' | 'configVersion'>;
  target: TargetName;
  mode: RunModeName;
  body: Record<string, unknown>;
  idempotencyKey?: string;
  /** When the gateway received the request: the base of delaySeconds. */
  receivedAt: Date;
}

/**
 * What came of a run request. `run` is the answer's body: the run's fields as the spec shows
 * them for that outcome.
 */
export type StartRunResult =
  /** The run (or dry run) finished and succeeded: its result. */
  | { outcome: 'finished'; run: Record<string, unknown> }
  /**
   * Queued, scheduled, or paused (a wait, an approval): the result comes later. `ended`: an async
   * run the invocation service executed inline had ended by its reply (its end, for a `Prefer:
   * wait` answer; the 202 still says QUEUED).
   */
  | { outcome: 'accepted'; run: Record<string, unknown>; ended?: EndedRun }
  /** The run ran and failed or timed out. */
  | { outcome: 'failed'; run: Record<string, unknown> }
  /** No run: the request was refused, the quota is used up, or the run could not be started. */
  | { outcome: 'refused'; refusal: Refusal };

/** The spec's limit; a longer key is ignored (the request runs as if it had none). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 128;

/** An async run's end, when the invocation service ran it inline (`StartInvocationReply.ended_run`). */
export type EndedRun = NonNullable<StartInvocationReply['endedRun']>;

const TARGETS: Record<TargetName, RunTarget> = { BOT: RunTarget.BOT, FLOW: RunTarget.FLOW, AUTOMATION: RunTarget.AUTOMATION };
const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/**
 * Starts a run: checks the scheduling fields of an async trigger, hands the request that passed
 * the pipeline to the invocation service (StartInvocation, request/reply) and turns its reply
 * into the outcome. Outcomes are returned, refusals included, not thrown: an expected outcome
 * does not pay for a stack trace.
 */
@Injectable()
export class StartRunHandler {
  private readonly syncTimeoutMs: number;

  constructor(
    private readonly services: ServiceClient,
    private readonly projects: ProjectRepository,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.syncTimeoutMs = config.SYNC_REQUEST_TIMEOUT_MS;
  }

  async execute(command: StartRunCommand): Promise<StartRunResult> {
    const { caller, target, mode, body, receivedAt } = command;
    let runAt: Date | undefined;
    // Only the async trigger endpoints schedule; the sync ones and bots/invoke ignore both fields.
    if (mode === 'ASYNC' && target !== 'BOT') {
      const scheduling = schedulingFieldsOf(body, receivedAt);
      if (scheduling && 'error' in scheduling) return { outcome: 'refused', refusal: { kind: 'invalid', message: scheduling.error } };
      // A dry run validates and records nothing, so it carries no start time.
      if (scheduling && body.dryRun !== true) runAt = scheduling.runAt;
    }
    const key = command.idempotencyKey;
    const draft = target === 'AUTOMATION' && mode === 'SYNC' && body.runtimeStage === 'app' ? await this.draftOf(caller.projectId) : '';
    const message = create(StartInvocationRequestSchema, {
      orgId: caller.orgId,
      projectId: caller.projectId,
      tokenId: caller.tokenId,
      target: TARGETS[target],
      mode: mode === 'SYNC' ? RunMode.SYNC : RunMode.ASYNC,
      bodyJson: JSON.stringify(body),
      idempotencyKey: key !== undefined && key !== '' && key.length <= MAX_IDEMPOTENCY_KEY_LENGTH ? key : '',
      publishedVersion: caller.publishedVersion,
      configVersion: BigInt(caller.configVersion),
      draftDefinitionJson: draft,
      receivedAt: timestampFromDate(receivedAt),
      runAt: runAt ? timestampFromDate(runAt) : undefined,
    });
    let reply: StartInvocationReply;
    try {
      const request = toBinary(StartInvocationRequestSchema, message);
      // A sync run is answered when it ends, so it waits longer than the default deadline.
      const bytes = await this.services.send(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, request, mode === 'SYNC' ? this.syncTimeoutMs : undefined);
      reply = fromBinary(StartInvocationReplySchema, bytes);
    } catch (error) {
      return this.notStarted(error, mode);
    }
    return resultOf(reply, target, mode);
  }

  /** The project's draft, for an automation sync test run (runtimeStage "app"). */
  private async draftOf(projectId: string): Promise<string> {
    const draft = await this.projects.draftOf(projectId);
    return draft ? JSON.stringify(draft) : '';
  }

  private notStarted(error: unknown, mode: RunModeName): StartRunResult {
    this.logger.error({ err: error }, `StartInvocation failed (${mode})`);
    // A retry with the same idempotency key is safe: it returns the run if it was made.
    if (mode === 'SYNC') return refused('failed', RUN_MESSAGES.syncTriggerFailed);
    return isUnanswered(error) ? refused('unavailable', API_ERRORS.invocationServiceUnavailable) : refused('failed', RUN_MESSAGES.runNotStarted);
  }
}

function refused(kind: Refusal['kind'], message: string): StartRunResult {
  return { outcome: 'refused', refusal: { kind, message } };
}

/** The outcome of a StartInvocation reply; README "Run answers" documents each row. */
export function resultOf(reply: StartInvocationReply, target: TargetName, mode: RunModeName): StartRunResult {
  if (reply.quotaUnavailable) return refused('unavailable', QUOTA_UNAVAILABLE_MESSAGE);
  if (reply.quotaExceeded) {
    const periodStart = reply.quotaExceeded.periodStart ? timestampDate(reply.quotaExceeded.periodStart).toISOString() : '';
    const quota = { limit: Number(reply.quotaExceeded.limit), used: Number(reply.quotaExceeded.used), periodStart };
    return { outcome: 'refused', refusal: { kind: 'quota-exceeded', message: QUOTA_EXCEEDED_MESSAGE, quota } };
  }
  if (reply.unavailableReason) return refused('unavailable', reply.unavailableReason);
  const result = reply.resultJson ? (JSON.parse(reply.resultJson) as unknown) : null;
  if (reply.dryRun) return { outcome: 'finished', run: { invocationId: null, status: reply.status, dryRun: true, result } };

  const session = target === 'BOT' && reply.sessionId ? { sessionId: reply.sessionId } : {};
  const error = reply.errorMessage ? { error: reply.errorMessage } : {};
  const scheduledFor = reply.scheduledFor ? timestampDate(reply.scheduledFor).toISOString() : null;
  if (reply.idempotentReplay) {
    const finished = FINAL.has(reply.status);
    return {
      outcome: finished ? 'finished' : 'accepted',
      run: {
        invocationId: reply.invocationId,
        status: reply.status,
        ...(finished ? { result } : {}),
        ...(!finished && scheduledFor ? { scheduledFor } : {}),
        ...error,
        ...session,
        idempotentReplay: true,
      },
    };
  }
  if (reply.status === 'FAILED' || reply.status === 'TIMEOUT') {
    return { outcome: 'failed', run: { error: reply.errorMessage || 'Run failed', invocationId: reply.invocationId, status: reply.status, ...session } };
  }
  if (mode === 'ASYNC') {
    // Bots/invoke never schedules: its answer has no scheduledFor at all.
    const schedule = target === 'BOT' ? {} : { scheduledFor };
    const run = { invocationId: reply.invocationId, status: reply.status, ...schedule, ...session };
    return reply.endedRun ? { outcome: 'accepted', run, ended: reply.endedRun } : { outcome: 'accepted', run };
  }
  // A sync run that paused (wait, approval) goes on later: accepted, not finished.
  if (reply.status !== 'SUCCEEDED') return { outcome: 'accepted', run: { invocationId: reply.invocationId, status: reply.status, ...session } };
  return { outcome: 'finished', run: { invocationId: reply.invocationId, status: reply.status, result, ...session } };
}

