import type { EntityManager } from 'typeorm';
import type { CallbackAttemptEntry, InvocationDocument } from '../lifecycle/invocation.projector.js';

/**
 * Records one callback attempt of a run and writes the run's read model as `fold` makes it with
 * the attempt (the projector's rule), in the caller's transaction. Idempotent: the (run, webhookId, attempt) key is recorded once, so a
 * redelivered CallbackAttempted changes nothing. Returns false when it was known already.
 *
 * The run's state row is locked first, as `transition` does, so a concurrent transition and an
 * attempt never overwrite each other's document.
 */
export async function recordCallbackAttempt(
  manager: EntityManager,
  invocationId: string,
  entry: CallbackAttemptEntry,
  fold: (document: InvocationDocument) => InvocationDocument,
  at: Date,
): Promise<boolean> {
  const inserted: unknown[] = await manager.query(
    `INSERT INTO callback_attempts (invocation_id, webhook_id, attempt, entry, recorded_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [invocationId, entry.webhookId, entry.attempt, JSON.stringify(entry), at],
  );
  if (inserted.length === 0) return false;
  await manager.query('SELECT 1 FROM invocations WHERE id = $1 FOR UPDATE', [invocationId]);
  const views: Array<{ document: InvocationDocument }> = await manager.query('SELECT document FROM invocation_views WHERE id = $1', [invocationId]);
  const document = views[0]?.document;
  // Not a run of this service (yet): the attempt is kept and folded in by a rebuild.
  if (!document) return true;
  await manager.query('UPDATE invocation_views SET document = $2, updated_at = $3 WHERE id = $1', [
    invocationId,
    JSON.stringify(fold(document)),
    at,
  ]);
  return true;
}
