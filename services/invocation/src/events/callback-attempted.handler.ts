import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import {
  CALLBACK_EVENT_SUBJECTS,
  CallbackAttemptOutcome,
  EVENT_TYPES,
  timestampDate,
  unpackPayloadAs,
  type CallbackAttempted,
  type Envelope,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { recordCallbackAttempt } from '../runs/callback-attempts.repository.js';
import { applyCallbackAttempt, type CallbackAttemptEntry } from '../lifecycle/invocation.projector.js';

const OUTCOME_NAMES: Partial<Record<CallbackAttemptOutcome, string>> = {
  [CallbackAttemptOutcome.ACKNOWLEDGED]: 'ACKNOWLEDGED',
  [CallbackAttemptOutcome.HTTP_ERROR]: 'HTTP_ERROR',
  [CallbackAttemptOutcome.TIMEOUT]: 'TIMEOUT',
  [CallbackAttemptOutcome.REFUSED]: 'REFUSED',
  [CallbackAttemptOutcome.TLS_ERROR]: 'TLS_ERROR',
  [CallbackAttemptOutcome.CONNECTION_ERROR]: 'CONNECTION_ERROR',
};

/** Projects each callback attempt into the run's `callbackAttempts` (idempotent, see recordCallbackAttempt). */
@Controller()
export class CallbackAttemptedHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @EventPattern<string>(CALLBACK_EVENT_SUBJECTS.CALLBACK_ATTEMPTED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.CALLBACK_ATTEMPTED);
    const invocationId = event.invocationId || envelope.invocationId;
    const entry = callbackAttemptEntry(event);
    await this.transactions.run((tx) => recordCallbackAttempt(tx.manager, invocationId, entry, (document) => applyCallbackAttempt(document, entry), new Date()));
  }
}

export function callbackAttemptEntry(event: CallbackAttempted): CallbackAttemptEntry {
  return {
    webhookId: event.deliveryId,
    attempt: event.attempt,
    attemptedAt: (event.attemptedAt ? timestampDate(event.attemptedAt) : new Date(0)).toISOString(),
    durationMs: event.durationMs,
    outcome: OUTCOME_NAMES[event.outcome] ?? 'UNKNOWN',
    statusCode: event.statusCode === 0 ? null : event.statusCode,
    error: event.error === '' ? null : event.error,
    final: event.final,
  };
}
