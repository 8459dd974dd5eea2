import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Counter, type Registry } from 'prom-client';
import {
  create,
  DeliveryVerdict,
  fromBinary,
  timestampDate,
  toBinary,
  VerifyDeliveryReplySchema,
  VerifyDeliveryRequestSchema,
  WEBHOOK_REQUEST_SUBJECTS,
  type VerifyDeliveryReply,
} from '@runline/contracts';
import { GroupCommit, TransactionRunner } from '@runline/db';
import { METRICS_REGISTRY, retryTransient, SecretBox } from '@runline/runtime';
import {
  DELIVERY_VERDICTS_METRIC,
  deliveryKeyOf,
  RunlineSignatureScheme,
  verifyInboundHookDelivery,
  type DeliveryVerdictLabel,
  type IncomingDelivery,
  type VerificationFailure,
} from '@runline/signatures';
import { WebhookConfig } from '../config.js';
import { DELIVERY_READ_RETRY } from '../hooks/delivery-read-retry.js';
import { hooksByIds, type HookRow } from '../hooks/inbound-hooks.repository.js';
import { adapterFor } from '../providers/provider-registry.js';
import { subscriptionById } from '../subscriptions/webhook-subscriptions.repository.js';

const VERDICT_LABELS: Record<DeliveryVerdict, DeliveryVerdictLabel | 'unspecified'> = {
  [DeliveryVerdict.UNSPECIFIED]: 'unspecified',
  [DeliveryVerdict.VERIFIED]: 'verified',
  [DeliveryVerdict.NOT_FOUND]: 'not_found',
  [DeliveryVerdict.REVOKED]: 'revoked',
  [DeliveryVerdict.INVALID_SIGNATURE]: 'invalid_signature',
  [DeliveryVerdict.STALE_TIMESTAMP]: 'stale_timestamp',
  [DeliveryVerdict.IGNORED]: 'ignored',
};

const REFUSED: Record<'revoked' | VerificationFailure, DeliveryVerdict> = {
  revoked: DeliveryVerdict.REVOKED,
  'invalid-signature': DeliveryVerdict.INVALID_SIGNATURE,
  'stale-timestamp': DeliveryVerdict.STALE_TIMESTAMP,
};

/**
 * Verifies a delivery to `/v1/hooks/{id}` for the gateway when the id is not an inbound hook the
 * gateway holds a copy of, which makes it a managed subscription's (or nobody's): the
 * subscription's deliveries are verified with the provider's scheme and signing secret, named
 * by the provider's delivery id, and filtered to the subscribed events (IGNORED otherwise); from
 * there on the gateway treats them exactly as a hook's. Their secrets are opened here only.
 *
 * Inbound hooks are verified by the gateway from its copy (GetHookForGateway). They are still
 * verified here too, by the same checks (verifyInboundHookDelivery of @runline/signatures), so a
 * gateway whose "no such hook" was read just before the hook was created still gets the right
 * answer, and a gateway of the previous release keeps working during an upgrade.
 *
 * Concurrent deliveries share their statements (bench/README.md, "Inbound webhooks"): hook
 * lookups are read in one prepared statement per batch, and nothing is written here, so a
 * delivery costs one read and no commit. A delivery alone is not held back.
 */
@Controller()
export class VerifyDeliveryHandler {
  private readonly scheme: RunlineSignatureScheme;
  /** A subscription's deliveries are counted like a hook's with no limit of its own. */
  private readonly defaultRateLimit: number;
  private readonly verdicts: Counter<'verdict'>;
  private readonly hooks: GroupCommit<string, HookRow | null>;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(WebhookConfig) config: WebhookConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    // Two statements in flight: while one runs, the next batch fills (as the run recorder does).
    this.hooks = new GroupCommit((ids) => retryTransient(() => hooksByIds(transactions, ids), DELIVERY_READ_RETRY), 2);
    this.scheme = new RunlineSignatureScheme(config.WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS);
    this.defaultRateLimit = config.WEBHOOK_DEFAULT_RATE_LIMIT_PER_MINUTE;
    this.verdicts = new Counter({ ...DELIVERY_VERDICTS_METRIC, registers: [registry] });
  }

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.VERIFY_DELIVERY)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(VerifyDeliveryRequestSchema, data);
    const reply = await this.verify({
      hookId: request.hookId,
      delivery: { rawBody: request.rawBody, headers: request.headers, receivedAt: request.receivedAt ? timestampDate(request.receivedAt) : new Date() },
    });
    this.verdicts.inc({ verdict: VERDICT_LABELS[reply.verdict] });
    return toBinary(VerifyDeliveryReplySchema, reply);
  }

  private async verify({ hookId, delivery }: { hookId: string; delivery: IncomingDelivery }): Promise<VerifyDeliveryReply> {
    const hook = await this.hooks.submit(hookId);
    if (!hook) return this.verifySubscription(hookId, delivery);
    const checked = verifyInboundHookDelivery({ id: hook.id, active: hook.status === 'ACTIVE' }, () => this.secrets.open(hook.sealed_secret), delivery, this.scheme);
    if (checked.verdict !== 'verified') return create(VerifyDeliveryReplySchema, { verdict: REFUSED[checked.verdict] });
    return create(VerifyDeliveryReplySchema, {
      verdict: DeliveryVerdict.VERIFIED,
      orgId: hook.org_id,
      projectId: hook.project_id,
      hookName: hook.name,
      rateLimitPerMinute: hook.rate_limit_per_minute,
      deliveryKey: checked.deliveryKey,
    });
  }

  private async verifySubscription(id: string, delivery: IncomingDelivery): Promise<VerifyDeliveryReply> {
    const manager = this.transactions.dataSource.manager;
    const subscription = await retryTransient(() => subscriptionById(manager, id), DELIVERY_READ_RETRY);
    const adapter = subscription ? adapterFor(subscription.provider) : undefined;
    if (!subscription || !adapter) return create(VerifyDeliveryReplySchema, { verdict: DeliveryVerdict.NOT_FOUND });
    if (subscription.status === 'REVOKED') return create(VerifyDeliveryReplySchema, { verdict: DeliveryVerdict.REVOKED });
    // Never created at the provider: nothing can have signed for it.
    if (!subscription.sealed_signing_secret) return create(VerifyDeliveryReplySchema, { verdict: DeliveryVerdict.INVALID_SIGNATURE });

    const verification = adapter.scheme.verify(delivery, this.secrets.open(subscription.sealed_signing_secret));
    if (!verification.ok) return create(VerifyDeliveryReplySchema, { verdict: REFUSED[verification.failure] });
    if (adapter.classify(adapter.scheme.eventNameOf(delivery), subscription.events) === 'ignore') {
      return create(VerifyDeliveryReplySchema, { verdict: DeliveryVerdict.IGNORED });
    }
    const deliveryId = adapter.scheme.deliveryIdOf(delivery);
    return create(VerifyDeliveryReplySchema, {
      verdict: DeliveryVerdict.VERIFIED,
      orgId: subscription.org_id,
      projectId: subscription.project_id,
      hookName: subscription.provider,
      rateLimitPerMinute: this.defaultRateLimit,
      deliveryKey: deliveryId === null ? '' : deliveryKeyOf(subscription.id, deliveryId),
    });
  }
}
