import type { TransactionRunner } from '@runline/db';
import type { InvocationDocument } from '../events/invocation.projector.js';
import { transition } from './invocation-store.js';

/**
 * Records that a SCHEDULED run's job was cancelled: the run is CANCELLED and never executes.
 * Applies only while the run still waits for `jobName`; null when it no longer does.
 */
export function recordCancel(transactions: TransactionRunner, invocationId: string, jobName: string): Promise<InvocationDocument | null> {
  return transactions.run((tx) =>
    transition(tx, invocationId, { status: 'SCHEDULED', waitingJob: jobName }, { status: 'CANCELLED', waitingJob: null }, [{ type: 'InvocationCancelled' }]),
  );
}

/** Records a SCHEDULED run's new start time (its job was moved); null when it no longer waits for `jobName`. */
export function recordReschedule(transactions: TransactionRunner, invocationId: string, jobName: string, runAt: Date): Promise<InvocationDocument | null> {
  return transactions.run((tx) =>
    transition(tx, invocationId, { status: 'SCHEDULED', waitingJob: jobName }, { status: 'SCHEDULED', runAfter: runAt }, [
      { type: 'InvocationRescheduled', scheduledFor: runAt.toISOString() },
    ]),
  );
}
