import { randomUUID } from 'node:crypto';
import type { BusMessage } from '@runline/bus';
import {
  CallbackAttemptedSchema,
  CallbackAttemptOutcome,
  create,
  EVENT_TYPES,
  newEnvelope,
  timestampFromDate,
  toBusMessage,
} from '@runline/contracts';
import type { AttemptOutcomeName, AttemptRecord, NewDelivery } from './callback-deliveries.repository.js';

const OUTCOMES: Record<AttemptOutcomeName, CallbackAttemptOutcome> = {
  ACKNOWLEDGED: CallbackAttemptOutcome.ACKNOWLEDGED,
  HTTP_ERROR: CallbackAttemptOutcome.HTTP_ERROR,
  TIMEOUT: CallbackAttemptOutcome.TIMEOUT,
  REFUSED: CallbackAttemptOutcome.REFUSED,
  TLS_ERROR: CallbackAttemptOutcome.TLS_ERROR,
  CONNECTION_ERROR: CallbackAttemptOutcome.CONNECTION_ERROR,
};

/** The CallbackAttempted event of one recorded attempt, continuing the DeliverCallback's chain. */
export function callbackAttemptedMessage(delivery: NewDelivery, record: AttemptRecord): BusMessage {
  return toBusMessage(
    newEnvelope({
      id: randomUUID(),
      type: EVENT_TYPES.CALLBACK_ATTEMPTED,
      payload: create(CallbackAttemptedSchema, {
        deliveryId: delivery.id,
        invocationId: delivery.invocationId,
        attempt: record.attempt,
        attemptedAt: timestampFromDate(record.attemptedAt),
        durationMs: record.durationMs,
        outcome: OUTCOMES[record.outcome],
        statusCode: record.statusCode ?? 0,
        error: record.error ?? '',
        final: record.status !== 'PENDING',
      }),
      orgId: delivery.orgId,
      projectId: delivery.projectId,
      invocationId: delivery.invocationId,
      correlationId: delivery.correlationId ?? undefined,
      causationId: delivery.id,
      traceparent: delivery.traceparent ?? undefined,
      occurredAt: record.attemptedAt,
    }),
  );
}
