import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, GetHookForGatewayReplySchema, GetHookForGatewayRequestSchema, toBinary, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { retryTransient } from '@runline/runtime';
import { WebhookConfig } from '../config.js';
import { DELIVERY_READ_RETRY } from '../hooks/delivery-read-retry.js';
import { inboundHookCopy } from '../hooks/inbound-hook.message.js';
import { hookById } from '../hooks/inbound-hooks.repository.js';

/**
 * The hook a gateway verifies deliveries with from its own copy (DESIGN section 9's "projected
 * copy"): asked only when the gateway holds no current copy, so this is off the hot path. The
 * secret leaves sealed; the gateway holds SECRETS_KEY like every service. No hook by that id:
 * an empty answer, and the gateway asks VerifyDelivery (a managed subscription's id).
 */
@Controller()
export class GetHookForGatewayHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(WebhookConfig) private readonly config: WebhookConfig,
  ) {}

  @MessagePattern(WEBHOOK_QUERY_SUBJECTS.GET_HOOK_FOR_GATEWAY)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(GetHookForGatewayRequestSchema, data);
    const row = await retryTransient(() => hookById(this.transactions.dataSource.manager, request.hookId), DELIVERY_READ_RETRY);
    const hook = row ? inboundHookCopy(row, this.config.WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS) : undefined;
    return toBinary(GetHookForGatewayReplySchema, create(GetHookForGatewayReplySchema, { hook }));
  }
}
