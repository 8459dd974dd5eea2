import { isUnanswered } from '@runline/bus';
import { Inject, Injectable } from '@nestjs/common';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  isUuid,
  RecordRejectedDeliveryReplySchema,
  RecordRejectedDeliveryRequestSchema,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampDate,
  timestampFromDate,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
  type StartInvocationReply,
} from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { AccessDirectory } from '../platform/access/access-directory.js';
import { DeliveryVerifier } from './delivery-verifier.js';
import type { Refusal } from '../platform/errors/domain-error.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { BODY_ERRORS, parseJsonObject } from '../platform/json/json-object.js';
import { RateLimitConfig } from '../platform/rate-limits/rate-limit.config.js';
import { RateLimitCounters } from '../platform/rate-limits/rate-limit-counters.js';
import type { RateLimitPolicy, Tally } from '../platform/rate-limits/rate-limit-policy.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { resultOf, RUN_MESSAGES } from '../runs/index.js';

/** The largest delivery body a hook takes (DESIGN section 9: 256 KiB). */
export const MAX_HOOK_BODY_BYTES = 256 * 1024;

/** Per-hook rate limits count in one-minute windows, under this endpoint name. */
const HOOK_RATE_WINDOW_MS = 60_000;
const HOOK_RATE_ENDPOINT = 'hooks.deliver';

/** A repeated `X-Runline-Delivery` is answered with its first run within this window: 24 hours from its first arrival. */
const DELIVERY_DEDUPE_MS = 24 * 60 * 60 * 1000;
/** Bounds the walk over an id's spent keys: one generation per day of repeats is years of them. */
const MAX_KEY_GENERATIONS = 1000;

/**
 * Body fields a chatbot flow's async trigger would read as instructions rather than data
 * (a dry run, a start time): a delivery is always an immediate run, so they are dropped.
 */
const NOT_DATA = ['dryRun', 'runAt', 'delaySeconds'] as const;

export interface ReceiveHookDeliveryCommand {
  hookId: string;
  rawBody: Buffer;
  /** Lower-case header names. */
  headers: Record<string, string>;
  receivedAt: Date;
}

/** What came of a delivery; the hooks controller turns each into its status. */
export type HookDeliveryResult =
  | { outcome: 'not-found' | 'revoked' | 'invalid-signature' | 'stale-timestamp' }
  /** 200: a managed subscription's delivery of an event it does not subscribe to; nothing runs. */
  | { outcome: 'ignored' }
  | { outcome: 'bad-body'; message: string }
  | { outcome: 'disabled' }
  | { outcome: 'rate-limited'; policy: RateLimitPolicy; tally: Tally }
  /** 202: the run is durably QUEUED. `rateLimit` set when the delivery was counted. */
  | { outcome: 'accepted'; invocationId: string; status: string; rateLimit?: { policy: RateLimitPolicy; tally: Tally } }
  /** 409: this delivery id was seen within 24 hours; the first run's id. */
  | { outcome: 'repeated'; invocationId: string }
  /** 422: the trigger checks refused it; the body is kept as a dead letter. */
  | { outcome: 'rejected'; invocationId: string; reasons: string[] }
  | { outcome: 'refused'; refusal: Refusal };

/**
 * A delivery to an inbound hook's public URL (or a managed subscription's, which is the same
 * URL with the subscription's id), in the order of README "Inbound webhooks":
 * verified (hook known, active, signature, delivery id → idempotency key: by this gateway from
 * its copy of the hook, or by the webhook service for a subscription), then the body, the
 * project and its master switch, the hook's rate limit, and the run:
 * an async StartInvocation, which answers once the run is committed QUEUED, so a 202 is never
 * given for a run that could be lost. The delivery key makes a repeated delivery find its first
 * run instead of starting another, crash or no crash.
 */
@Injectable()
export class ReceiveHookDeliveryHandler {
  private readonly rateLimitsOn: boolean;

  constructor(
    private readonly services: ServiceClient,
    private readonly verifier: DeliveryVerifier,
    private readonly directory: AccessDirectory,
    private readonly counters: RateLimitCounters,
    @Inject(RateLimitConfig) rateLimits: RateLimitConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.rateLimitsOn = rateLimits.RATE_LIMITS === 'on';
  }

  async execute(command: ReceiveHookDeliveryCommand): Promise<HookDeliveryResult> {
    if (!isUuid(command.hookId)) return { outcome: 'not-found' };
    // One version read serves the hook's copy and the project's.
    const since = performance.now();
    const verified = await this.verifier.verify(command, since);
    if (verified.verdict !== 'verified') return { outcome: verified.verdict };

    const body = jsonObjectOf(command.rawBody);
    if ('error' in body) return { outcome: 'bad-body', message: body.error };

    const project = await this.directory.project(verified.projectId, since);
    // A hook outlives nothing: once its project is gone, so is the hook.
    if (!project || project.deleted) return { outcome: 'not-found' };
    if (!project.externalApiEnabled) return { outcome: 'disabled' };

    let rateLimit: { policy: RateLimitPolicy; tally: Tally } | undefined;
    if (this.rateLimitsOn) {
      const policy = { limit: verified.rateLimitPerMinute, windowMs: HOOK_RATE_WINDOW_MS };
      const counted = this.counters.count({ tokenId: command.hookId, endpoint: HOOK_RATE_ENDPOINT, limit: policy.limit, windowMs: policy.windowMs });
      const tally = counted instanceof Promise ? await counted : counted;
      if (tally && tally.count > policy.limit) return { outcome: 'rate-limited', policy, tally };
      if (tally) rateLimit = { policy, tally };
    }

    const target = project.type === 'AUTOMATION' ? 'AUTOMATION' : 'FLOW';
    const runBody = target === 'AUTOMATION' ? { payload: body.value } : withoutInstructions(body.value);
    const bodyJson = JSON.stringify(runBody);
    let reply: StartInvocationReply;
    try {
      const start = (idempotencyKey: string) => {
        const request = create(StartInvocationRequestSchema, {
          orgId: project.orgId,
          projectId: project.id,
          tokenId: '',
          target: target === 'AUTOMATION' ? RunTarget.AUTOMATION : RunTarget.FLOW,
          mode: RunMode.ASYNC,
          bodyJson,
          idempotencyKey,
          publishedVersion: project.publishedVersion,
          configVersion: BigInt(project.configVersion),
          receivedAt: timestampFromDate(command.receivedAt),
          triggerSource: 'WEBHOOK',
        });
        return this.services.send(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, toBinary(StartInvocationRequestSchema, request));
      };
      reply = await this.startOnce(verified.deliveryKey, command.receivedAt, async (key) => fromBinary(StartInvocationReplySchema, await start(key)));
    } catch (error) {
      this.logger.error({ err: error, hookId: command.hookId }, 'StartInvocation failed (hook delivery)');
      const refusal: Refusal = isUnanswered(error)
        ? { kind: 'unavailable', message: API_ERRORS.invocationServiceUnavailable }
        : { kind: 'failed', message: RUN_MESSAGES.runNotStarted };
      return { outcome: 'refused', refusal };
    }

    if (!reply.invocationId) {
      const result = resultOf(reply, target, 'ASYNC');
      return result.outcome === 'refused' ? result : { outcome: 'refused', refusal: { kind: 'failed', message: RUN_MESSAGES.runNotStarted } };
    }
    if (reply.idempotentReplay) return { outcome: 'repeated', invocationId: reply.invocationId };
    // An immediate async run is FAILED at once only when the trigger checks refused it.
    if (reply.status === 'FAILED') return this.rejected(command.hookId, reply, target, bodyJson);
    return { outcome: 'accepted', invocationId: reply.invocationId, status: reply.status, rateLimit };
  }

  /**
   * Starts the delivery's run with the key of its delivery id, so the run's own transaction is
   * the dedupe. A key taken (with its run) more than 24 hours before this delivery arrived is
   * spent: the delivery then tries the id's next key (`hook:<key>.1`, `.2`, …), so the id runs
   * again once per window, and repeats racing past a window still meet on one key. Walking the
   * spent keys costs a replay each, only for ids repeated after a day. A delivery without an
   * id has no key: no dedupe.
   */
  private async startOnce(deliveryKey: string, receivedAt: Date, start: (key: string) => Promise<StartInvocationReply>): Promise<StartInvocationReply> {
    if (!deliveryKey) return start('');
    for (let generation = 0; ; generation += 1) {
      const reply = await start(generation === 0 ? `hook:${deliveryKey}` : `hook:${deliveryKey}.${generation}`);
      const firstArrival = reply.idempotentReplay && reply.keyTakenAt ? timestampDate(reply.keyTakenAt).getTime() : null;
      const spent = firstArrival !== null && receivedAt.getTime() - firstArrival > DELIVERY_DEDUPE_MS;
      if (!spent || generation >= MAX_KEY_GENERATIONS) return reply;
    }
  }

  /** Keeps the body as a dead letter before answering 422, so what was refused can be replayed. */
  private async rejected(hookId: string, reply: StartInvocationReply, target: 'FLOW' | 'AUTOMATION', bodyJson: string): Promise<HookDeliveryResult> {
    const reason = reply.errorMessage || 'Trigger check failed';
    const request = create(RecordRejectedDeliveryRequestSchema, { hookId, invocationId: reply.invocationId, bodyJson, runTarget: target, failureReason: reason });
    const answer = fromBinary(
      RecordRejectedDeliveryReplySchema,
      await this.services.request('webhook', WEBHOOK_REQUEST_SUBJECTS.RECORD_REJECTED_DELIVERY, toBinary(RecordRejectedDeliveryRequestSchema, request)),
    );
    if (!answer.recorded) this.logger.warn({ hookId, invocationId: reply.invocationId }, 'rejected delivery not kept: the hook is gone');
    return { outcome: 'rejected', invocationId: reply.invocationId, reasons: reason.split('; ') };
  }
}

/** The delivery body as a JSON object, with the same rules as every route's body; an empty body is not JSON here. */
function jsonObjectOf(raw: Buffer): { value: Record<string, unknown> } | { error: string } {
  const text = raw.toString('utf8');
  return text.trim() === '' ? { error: BODY_ERRORS.notJson } : parseJsonObject(text);
}

function withoutInstructions(body: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...body };
  for (const field of NOT_DATA) delete copy[field];
  return copy;
}
