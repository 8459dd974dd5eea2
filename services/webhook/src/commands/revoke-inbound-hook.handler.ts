import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, RevokeHookOutcome, RevokeInboundHookReplySchema, RevokeInboundHookRequestSchema, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { revokeHook } from '../hooks/inbound-hooks.repository.js';

/**
 * Revokes a hook. Gateway replicas verify deliveries from copies of hooks: the gateway that asked
 * commits a new config_version of the project once this has answered, which makes every copy
 * stale, so the URL answers 410 from the next delivery on, on every replica.
 */
@Controller()
export class RevokeInboundHookHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.REVOKE_INBOUND_HOOK)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RevokeInboundHookRequestSchema, data);
    const revoked = await revokeHook(this.transactions.dataSource.manager, request.projectId, request.id, new Date());
    const outcome = revoked ? RevokeHookOutcome.REVOKED : RevokeHookOutcome.NOT_FOUND;
    return toBinary(RevokeInboundHookReplySchema, create(RevokeInboundHookReplySchema, { outcome }));
  }
}
