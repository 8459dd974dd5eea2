import type { BusMessage } from '@runline/bus';
import { create, EVENT_TYPES, newEnvelope, PolledItemRunFailedSchema, PollFailedSchema, toBusMessage } from '@runline/contracts';
import type { ClaimedTrigger } from './polling-triggers.repository.js';

export function pollFailedMessage(trigger: ClaimedTrigger, reason: string): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.POLL_FAILED,
      payload: create(PollFailedSchema, {
        triggerId: trigger.id,
        pollKey: trigger.pollKey,
        pollEndpoint: trigger.pollEndpoint,
        source: trigger.source,
        failureReason: reason,
        dueAtMs: BigInt(trigger.dueAt.getTime()),
        runTarget: trigger.runTarget,
      }),
      orgId: trigger.orgId,
      projectId: trigger.projectId,
    }),
  );
}

export function itemRunFailedMessage(trigger: ClaimedTrigger, sealedPayloadJson: string, reason: string, invocationId: string): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.POLLED_ITEM_RUN_FAILED,
      payload: create(PolledItemRunFailedSchema, {
        triggerId: trigger.id,
        pollKey: trigger.pollKey,
        source: trigger.source,
        sealedPayloadJson,
        failureReason: reason,
        invocationId,
        runTarget: trigger.runTarget,
      }),
      orgId: trigger.orgId,
      projectId: trigger.projectId,
      ...(invocationId ? { invocationId } : {}),
    }),
  );
}
