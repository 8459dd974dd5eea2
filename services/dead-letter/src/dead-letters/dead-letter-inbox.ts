import { randomUUID } from 'node:crypto';
import type { Envelope } from '@runline/contracts';
import { Inbox, type TransactionRunner } from '@runline/db';
import { insertDeadLetter, type NewDeadLetter, type RunTargetName } from './dead-letters.repository.js';

/** What an event handler decides about its failure; the organization and project come from the envelope. */
export type DeadLetterFields = Omit<NewDeadLetter, 'id' | 'orgId' | 'projectId'>;

/**
 * Records one failure event as a dead letter, once: the consumer's inbox drops a redelivered
 * envelope, and the letter's `originKey` drops a second event about the same failure.
 */
export async function recordDeadLetterOnce(transactions: TransactionRunner, consumer: string, envelope: Envelope, letter: DeadLetterFields): Promise<void> {
  await Inbox.handleOnce(transactions.dataSource, consumer, envelope.id, ({ manager }) =>
    insertDeadLetter(manager, { id: randomUUID(), orgId: envelope.orgId, projectId: envelope.projectId, ...letter }, new Date()),
  );
}

/** What a replay runs, from an event's run target (empty in events written before it existed: a chatbot flow). */
export function runTargetOf(name: string): RunTargetName {
  return name === 'AUTOMATION' ? 'AUTOMATION' : 'FLOW';
}
