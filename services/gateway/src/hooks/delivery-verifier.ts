import { Inject, Injectable } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import {
  create,
  DeliveryVerdict,
  fromBinary,
  timestampFromDate,
  toBinary,
  VerifyDeliveryReplySchema,
  VerifyDeliveryRequestSchema,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { METRICS_REGISTRY, SecretBox } from '@runline/runtime';
import { DELIVERY_VERDICTS_METRIC, RunlineSignatureScheme, verifyInboundHookDelivery, type DeliveryVerdictLabel, type IncomingDelivery } from '@runline/signatures';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { HookDirectory } from './hook-directory.js';

/** A delivery to `/v1/hooks/{id}`, as the gateway received it. */
export interface ReceivedDelivery extends IncomingDelivery {
  hookId: string;
}

type Refused = 'not-found' | 'revoked' | 'invalid-signature' | 'stale-timestamp' | 'ignored';

/** What the verification says of a delivery, and where a verified one leads. */
export type DeliveryCheck =
  | { verdict: Refused }
  | {
      verdict: 'verified';
      projectId: string;
      rateLimitPerMinute: number;
      /** The idempotency key of the run (deliveryKeyOf); empty when the sender named no delivery. */
      deliveryKey: string;
    };

const LABELS: Record<DeliveryCheck['verdict'], DeliveryVerdictLabel> = {
  verified: 'verified',
  'not-found': 'not_found',
  revoked: 'revoked',
  'invalid-signature': 'invalid_signature',
  'stale-timestamp': 'stale_timestamp',
  ignored: 'ignored',
};

const FROM_WEBHOOK_SERVICE: Partial<Record<DeliveryVerdict, Refused>> = {
  [DeliveryVerdict.NOT_FOUND]: 'not-found',
  [DeliveryVerdict.REVOKED]: 'revoked',
  [DeliveryVerdict.STALE_TIMESTAMP]: 'stale-timestamp',
  [DeliveryVerdict.IGNORED]: 'ignored',
};

/**
 * Who sent a delivery to `/v1/hooks/{id}`. An inbound hook's delivery is checked here, from the
 * gateway's copy of the hook (HookDirectory), with the checks the webhook service makes too
 * (verifyInboundHookDelivery: active, signed with its secret, its delivery id as the run's key;
 * the secret opened only for that, never kept open or logged). That is one hop fewer than
 * asking the webhook service, and counted under the same metric as the webhook service counts
 * its verdicts. Any other id is a managed subscription's or nobody's: the webhook service
 * verifies it with the provider's scheme (VerifyDelivery), as before.
 */
@Injectable()
export class DeliveryVerifier {
  private readonly verdicts: Counter<'verdict'>;

  constructor(
    private readonly hooks: HookDirectory,
    private readonly services: ServiceClient,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.verdicts = new Counter({ ...DELIVERY_VERDICTS_METRIC, registers: [registry] });
  }

  /** `since`: performance.now() when the delivery arrived; the project lookup that follows shares its version read. */
  async verify(delivery: ReceivedDelivery, since: number): Promise<DeliveryCheck> {
    const hook = await this.hooks.hook(delivery.hookId, since);
    if (!hook) return this.askWebhookService(delivery);
    const scheme = new RunlineSignatureScheme(hook.timestampToleranceSeconds);
    const verdict = verifyInboundHookDelivery({ id: hook.id, active: hook.status === 'ACTIVE' }, () => this.secrets.open(hook.sealedSecret), delivery, scheme);
    this.verdicts.inc({ verdict: LABELS[verdict.verdict] });
    if (verdict.verdict !== 'verified') return verdict;
    return { verdict: 'verified', projectId: hook.projectId, rateLimitPerMinute: hook.rateLimitPerMinute, deliveryKey: verdict.deliveryKey };
  }

  private async askWebhookService(delivery: ReceivedDelivery): Promise<DeliveryCheck> {
    const request = create(VerifyDeliveryRequestSchema, {
      hookId: delivery.hookId,
      rawBody: delivery.rawBody,
      headers: delivery.headers,
      receivedAt: timestampFromDate(delivery.receivedAt),
    });
    const reply = fromBinary(
      VerifyDeliveryReplySchema,
      await this.services.request('webhook', WEBHOOK_REQUEST_SUBJECTS.VERIFY_DELIVERY, toBinary(VerifyDeliveryRequestSchema, request)),
    );
    if (reply.verdict === DeliveryVerdict.VERIFIED) {
      return { verdict: 'verified', projectId: reply.projectId, rateLimitPerMinute: reply.rateLimitPerMinute, deliveryKey: reply.deliveryKey };
    }
    return { verdict: FROM_WEBHOOK_SERVICE[reply.verdict] ?? 'invalid-signature' };
  }
}
