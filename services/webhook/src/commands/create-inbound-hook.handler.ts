import { randomBytes, randomUUID } from 'node:crypto';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, CreateInboundHookReplySchema, CreateInboundHookRequestSchema, fromBinary, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { WebhookConfig } from '../config.js';
import { inboundHookMessage } from '../hooks/inbound-hook.message.js';
import { insertHook } from '../hooks/inbound-hooks.repository.js';

/** Generated secrets: 32 random bytes, with a prefix that says what they are when found in a vault. */
export function generateHookSecret(): string {
  return `rlwhsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * Creates an inbound hook. The secret (given or generated) is sealed before it is stored and
 * returned in clear only in this reply; the gateway shows it once.
 */
@Controller()
export class CreateInboundHookHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(WebhookConfig) private readonly config: WebhookConfig,
  ) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.CREATE_INBOUND_HOOK)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(CreateInboundHookRequestSchema, data);
    const secret = request.secret || generateHookSecret();
    const row = await insertHook(
      this.transactions.dataSource.manager,
      {
        id: randomUUID(),
        orgId: request.orgId,
        projectId: request.projectId,
        name: request.name,
        sealedSecret: this.secrets.seal(secret),
        rateLimitPerMinute: request.rateLimitPerMinute > 0 ? request.rateLimitPerMinute : this.config.WEBHOOK_DEFAULT_RATE_LIMIT_PER_MINUTE,
      },
      new Date(),
    );
    return toBinary(CreateInboundHookReplySchema, create(CreateInboundHookReplySchema, { hook: inboundHookMessage(row), secret }));
  }
}
