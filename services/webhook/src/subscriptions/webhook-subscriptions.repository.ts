import type { EntityManager } from 'typeorm';
import { isUuid } from '@runline/contracts';
import { returningRows } from '@runline/db';

export type SubscriptionStatus = 'ACTIVE' | 'FAILED' | 'REVOKED';

export interface SubscriptionRow {
  id: string;
  org_id: string;
  project_id: string;
  provider: string;
  events: string[];
  status: SubscriptionStatus;
  endpoint: string;
  provider_id: string | null;
  failure_reason: string | null;
  sealed_credentials: string;
  sealed_signing_secret: string | null;
  attempt_until: Date | null;
  created_at: Date;
}

export interface NewSubscription {
  id: string;
  orgId: string;
  projectId: string;
  provider: string;
  events: readonly string[];
  endpoint: string;
  sealedCredentials: string;
}

/** What a subscription shows until its first try at the provider has ended (it ends FAILED if the process dies). */
export const NOT_YET_CREATED = 'Not created at the provider yet: the attempt was interrupted, retry it';

/** Stores a new subscription, FAILED until the provider has made the webhook, with its first try leased until `attemptUntil`. */
export async function insertSubscription(manager: EntityManager, subscription: NewSubscription, at: Date, attemptUntil: Date): Promise<SubscriptionRow> {
  const rows: SubscriptionRow[] = await manager.query(
    `INSERT INTO webhook_subscriptions (id, org_id, project_id, provider, events, status, endpoint, failure_reason, sealed_credentials, attempt_until, created_at)
     VALUES ($1, $2, $3, $4, $5, 'FAILED', $6, $7, $8, $9, $10) RETURNING *`,
    [subscription.id, subscription.orgId, subscription.projectId, subscription.provider, subscription.events, subscription.endpoint, NOT_YET_CREATED, subscription.sealedCredentials, attemptUntil, at],
  );
  return rows[0]!;
}

export async function subscriptionById(manager: EntityManager, id: string): Promise<SubscriptionRow | null> {
  if (!isUuid(id)) return null;
  const rows: SubscriptionRow[] = await manager.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function subscriptionOfProject(manager: EntityManager, projectId: string, id: string): Promise<SubscriptionRow | null> {
  const row = await subscriptionById(manager, id);
  return row && row.project_id === projectId ? row : null;
}

export async function subscriptionsOfProject(manager: EntityManager, projectId: string): Promise<SubscriptionRow[]> {
  return manager.query(`SELECT * FROM webhook_subscriptions WHERE project_id = $1 ORDER BY created_at DESC, id DESC`, [projectId]);
}

/** Takes the lease of a FAILED subscription for a new try; null when it is not FAILED or another try holds it. */
export async function claimAttempt(manager: EntityManager, id: string, attemptUntil: Date): Promise<SubscriptionRow | null> {
  const rows = returningRows<SubscriptionRow>(
    await manager.query(
      `UPDATE webhook_subscriptions SET attempt_until = $2
        WHERE id = $1 AND status = 'FAILED' AND (attempt_until IS NULL OR attempt_until < now()) RETURNING *`,
      [id, attemptUntil],
    ),
  );
  return rows[0] ?? null;
}

/**
 * The try that holds the lease ending at `leaseUntil` worked: ACTIVE with the provider's id and
 * sealed secret. Null when the subscription was revoked meanwhile, or the try lost its lease (it
 * outlived it and another try took the subscription): only the try holding the lease decides.
 */
export async function markActive(manager: EntityManager, id: string, leaseUntil: Date, providerId: string, sealedSigningSecret: string): Promise<SubscriptionRow | null> {
  const rows = returningRows<SubscriptionRow>(
    await manager.query(
      `UPDATE webhook_subscriptions SET status = 'ACTIVE', provider_id = $2, sealed_signing_secret = $3, failure_reason = NULL, attempt_until = NULL
        WHERE id = $1 AND status = 'FAILED' AND attempt_until = $4 RETURNING *`,
      [id, providerId, sealedSigningSecret, leaseUntil],
    ),
  );
  return rows[0] ?? null;
}

/** The try holding the lease ending at `leaseUntil` failed: FAILED with the provider's message, the lease given back. Null when it holds it no more. */
export async function markFailed(manager: EntityManager, id: string, leaseUntil: Date, reason: string): Promise<SubscriptionRow | null> {
  const rows = returningRows<SubscriptionRow>(
    await manager.query(
      `UPDATE webhook_subscriptions SET failure_reason = $2, attempt_until = NULL WHERE id = $1 AND status = 'FAILED' AND attempt_until = $3 RETURNING *`,
      [id, reason, leaseUntil],
    ),
  );
  return rows[0] ?? null;
}

/** REVOKED from now on; revoking twice keeps the first time. */
export async function markRevoked(manager: EntityManager, id: string, at: Date): Promise<void> {
  await manager.query(
    `UPDATE webhook_subscriptions SET status = 'REVOKED', attempt_until = NULL, revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`,
    [id, at],
  );
}
