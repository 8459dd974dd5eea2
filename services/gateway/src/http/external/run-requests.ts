import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BUS, BusNoRespondersError, BusTimeoutError, BusUnavailableError, type Bus } from '@runline/bus';
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
import { GatewayConfig } from '../../config.js';
import { API_ERRORS } from '../api-error.js';
import type { ExternalCaller } from './external-api.guard.js';

export type TargetName = 'BOT' | 'FLOW' | 'AUTOMATION';
export type RunModeName = 'SYNC' | 'ASYNC';

export interface RunRequest {
  caller: ExternalCaller;
  target: TargetName;
  mode: RunModeName;
  body: Record<string, unknown>;
  idempotencyKey?: string;
  /** When the gateway received the request (the base of delaySeconds); now when omitted. */
  receivedAt?: Date;
  /** Async triggers: when the run is to start, as the scheduling rules validated it. */
  runAt?: Date;
}

/** An answer to a run request: the status, the JSON body and any headers of its own. */
export interface RunAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The spec's limit; a longer key is ignored (the request runs as if it had none). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 128;

const TARGETS: Record<TargetName, RunTarget> = { BOT: RunTarget.BOT, FLOW: RunTarget.FLOW, AUTOMATION: RunTarget.AUTOMATION };
const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/**
 * Hands a run request that passed the pipeline to the invocation service (StartInvocation,
 * request/reply) and turns its reply into the spec's answer. Answers, not thrown errors:
 * expected outcomes do not pay for a stack trace.
 */
@Injectable()
export class RunRequests {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly dataSource: DataSource,
  ) {}

  async start(request: RunRequest): Promise<RunAnswer> {
    const { caller, target, mode, body } = request;
    const key = request.idempotencyKey;
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
      receivedAt: timestampFromDate(request.receivedAt ?? new Date()),
      runAt: request.runAt ? timestampFromDate(request.runAt) : undefined,
    });
    let reply: StartInvocationReply;
    try {
      const bytes = await this.bus.request(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, toBinary(StartInvocationRequestSchema, message), {
        timeoutMs: mode === 'SYNC' ? this.config.SYNC_REQUEST_TIMEOUT_MS : this.config.SERVICE_REQUEST_TIMEOUT_MS,
      });
      reply = fromBinary(StartInvocationReplySchema, bytes);
    } catch (error) {
      return this.unreachable(error, mode);
    }
    return answerOf(reply, target, mode);
  }

  /** The project's draft, for an automation sync test run (runtimeStage "app"). */
  private async draftOf(projectId: string): Promise<string> {
    const rows: Array<{ draft_definition: object | null }> = await this.dataSource.query('SELECT draft_definition FROM projects WHERE id = $1', [projectId]);
    const draft = rows[0]?.draft_definition;
    return draft ? JSON.stringify(draft) : '';
  }

  private unreachable(error: unknown, mode: RunModeName): RunAnswer {
    const timedOut = error instanceof BusTimeoutError || error instanceof BusNoRespondersError || error instanceof BusUnavailableError;
    this.logger.error({ err: error }, `StartInvocation failed (${mode})`);
    // A retry with the same idempotency key is safe: it returns the run if it was made.
    if (mode === 'SYNC') return { status: 500, body: { error: API_ERRORS.syncTriggerFailed } };
    return timedOut
      ? { status: 503, body: { error: API_ERRORS.invocationServiceUnavailable } }
      : { status: 500, body: { error: API_ERRORS.runNotStarted } };
  }
}

/** The HTTP answer for a StartInvocation reply; README "Run answers" documents each row. */
export function answerOf(reply: StartInvocationReply, target: TargetName, mode: RunModeName): RunAnswer {
  if (reply.quotaUnavailable) return { status: 503, body: { error: QUOTA_UNAVAILABLE_MESSAGE } };
  if (reply.quotaExceeded) {
    const limit = Number(reply.quotaExceeded.limit);
    const used = Number(reply.quotaExceeded.used);
    const periodStart = reply.quotaExceeded.periodStart ? timestampDate(reply.quotaExceeded.periodStart).toISOString() : '';
    return {
      status: 429,
      body: { error: QUOTA_EXCEEDED_MESSAGE, quota: { limit, used } },
      // Spec: these headers go on this response only.
      headers: {
        'x-quota-limit': String(limit),
        'x-quota-used': String(used),
        'x-quota-remaining': String(Math.max(0, limit - used)),
        'x-quota-period-start': periodStart,
      },
    };
  }
  if (reply.unavailableReason) return { status: 503, body: { error: reply.unavailableReason } };
  const result = reply.resultJson ? (JSON.parse(reply.resultJson) as unknown) : null;
  if (reply.dryRun) return { status: 200, body: { invocationId: null, status: reply.status, dryRun: true, result } };

  const session = target === 'BOT' && reply.sessionId ? { sessionId: reply.sessionId } : {};
  const error = reply.errorMessage ? { error: reply.errorMessage } : {};
  const scheduledFor = reply.scheduledFor ? timestampDate(reply.scheduledFor).toISOString() : null;
  if (reply.idempotentReplay) {
    const finished = FINAL.has(reply.status);
    return {
      status: finished ? 200 : 202,
      body: {
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
    return { status: 500, body: { error: reply.errorMessage || 'Run failed', invocationId: reply.invocationId, status: reply.status, ...session } };
  }
  if (mode === 'ASYNC') {
    // Bots/invoke never schedules: its answer has no scheduledFor at all.
    const schedule = target === 'BOT' ? {} : { scheduledFor };
    return { status: 202, body: { invocationId: reply.invocationId, status: reply.status, ...schedule, ...session } };
  }
  // A sync run that paused (wait, approval) goes on later: accepted, not finished.
  if (reply.status !== 'SUCCEEDED') return { status: 202, body: { invocationId: reply.invocationId, status: reply.status, ...session } };
  return { status: 200, body: { invocationId: reply.invocationId, status: reply.status, result, ...session } };
}
