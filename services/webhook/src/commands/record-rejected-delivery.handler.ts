import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  EVENT_TYPES,
  fromBinary,
  HookDeliveryRejectedSchema,
  newEnvelope,
  RecordRejectedDeliveryReplySchema,
  RecordRejectedDeliveryRequestSchema,
  toBinary,
  toBusMessage,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { hookById } from '../hooks/inbound-hooks.repository.js';
import { subscriptionById, type SubscriptionRow } from '../subscriptions/webhook-subscriptions.repository.js';

/**
 * A verified delivery the trigger checks rejected: its body goes to the dead-letter service as
 * a HookDeliveryRejected event (outbox, so it is not lost once this answers), sealed, with the
 * hook's name as the dead letter's source (for a managed subscription, the provider's name).
 * The gateway answers 422 only after this reply.
 */
@Controller()
export class RecordRejectedDeliveryHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.RECORD_REJECTED_DELIVERY)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RecordRejectedDeliveryRequestSchema, data);
    const recorded = await this.transactions.run(async (tx) => {
      const hook = (await hookById(tx.manager, request.hookId)) ?? subscriptionAsHook(await subscriptionById(tx.manager, request.hookId));
      if (!hook) return false;
      tx.emit(
        toBusMessage(
          newEnvelope({
            type: EVENT_TYPES.HOOK_DELIVERY_REJECTED,
            payload: create(HookDeliveryRejectedSchema, {
              hookId: hook.id,
              hookName: hook.name,
              sealedBodyJson: this.secrets.seal(request.bodyJson),
              runTarget: request.runTarget,
              failureReason: request.failureReason,
              invocationId: request.invocationId,
            }),
            orgId: hook.org_id,
            projectId: hook.project_id,
            ...(request.invocationId ? { invocationId: request.invocationId } : {}),
          }),
        ),
      );
      return true;
    });
    return toBinary(RecordRejectedDeliveryReplySchema, create(RecordRejectedDeliveryReplySchema, { recorded }));
  }
}

/** A subscription in the shape a rejected delivery needs: its dead letters' source is the provider. */
function subscriptionAsHook(row: SubscriptionRow | null): { id: string; name: string; org_id: string; project_id: string } | null {
  return row && { id: row.id, name: row.provider, org_id: row.org_id, project_id: row.project_id };
}
