/**
 * The deliveries table in SQL. Claims move `next_attempt_at` to the end of the claiming
 * replica's lease, conditionally, so a delivery is attempted by one replica at a time and a
 * repeated timer or sweep claims nothing. Recording an attempt applies only if the delivery is
 * still at the attempt before it, so an attempt repeated after a lost lease is recorded once.
 */
import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';

/** Where a delivery stands: attempts to come (PENDING) or ended. */
export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** A DeliverCallback as the handler accepted it. */
export interface NewDelivery {
  id: string;
  invocationId: string;
  orgId: string;
  projectId: string;
  url: string;
  sealedSecret: string | null;
  body: Uint8Array;
  runStatus: string;
  correlationId: string | null;
  traceparent: string | null;
}

/** A PENDING delivery this replica has claimed for its next attempt. */
export interface ClaimedDelivery extends NewDelivery {
  attemptsMade: number;
}

/** How one attempt ended, ready to record. */
export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  durationMs: number;
  outcome: AttemptOutcomeName;
  statusCode: number | null;
  error: string | null;
  /** What the delivery becomes: DELIVERED, FAILED, or PENDING until `nextAttemptAt`. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

export type AttemptOutcomeName = 'ACKNOWLEDGED' | 'HTTP_ERROR' | 'TIMEOUT' | 'REFUSED' | 'TLS_ERROR' | 'CONNECTION_ERROR';

interface RawDelivery {
  id: string;
  invocation_id: string;
  org_id: string;
  project_id: string;
  url: string;
  sealed_secret: string | null;
  body: Buffer;
  run_status: string;
  correlation_id: string | null;
  traceparent: string | null;
  attempts_made: number;
}

const COLUMNS = 'id, invocation_id, org_id, project_id, url, sealed_secret, body, run_status, correlation_id, traceparent, attempts_made';

/**
 * Inserts new deliveries, already claimed by this replica until `leaseUntil` (their first
 * attempt starts at once, here). A delivery whose id or run is known (a redelivered command)
 * is not inserted; returns the ids that were.
 */
export async function insertDeliveries(manager: EntityManager, items: readonly NewDelivery[], now: Date, leaseUntil: Date): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = returningRows<{ id: string }>(
    await manager.query(
      `INSERT INTO callback_deliveries (id, invocation_id, org_id, project_id, url, sealed_secret, body, run_status,
                                        correlation_id, traceparent, status, attempts_made, next_attempt_at, created_at, updated_at)
       SELECT u.*, 'PENDING', 0, $11::timestamptz, $12::timestamptz, $12::timestamptz
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::text[], $10::text[])
           AS u(id, invocation_id, org_id, project_id, url, sealed_secret, body, run_status, correlation_id, traceparent)
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [
        items.map((d) => d.id),
        items.map((d) => d.invocationId),
        items.map((d) => d.orgId),
        items.map((d) => d.projectId),
        items.map((d) => d.url),
        items.map((d) => d.sealedSecret),
        items.map((d) => Buffer.from(d.body.buffer, d.body.byteOffset, d.body.byteLength)),
        items.map((d) => d.runStatus),
        items.map((d) => d.correlationId),
        items.map((d) => d.traceparent),
        leaseUntil,
        now,
      ],
    ),
  );
  return new Set(rows.map((row) => row.id));
}

/** Claims up to `limit` PENDING deliveries whose next attempt is due by `now`, earliest first. */
export async function claimDueDeliveries(manager: EntityManager, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
  const rows = returningRows<RawDelivery>(
    await manager.query(
      `UPDATE callback_deliveries SET next_attempt_at = $2::timestamptz, updated_at = $1::timestamptz
        WHERE id = ANY(ARRAY(
                SELECT id FROM callback_deliveries
                 WHERE status = 'PENDING' AND next_attempt_at <= $1
                 ORDER BY next_attempt_at
                 LIMIT $3
                 FOR UPDATE SKIP LOCKED))
          AND status = 'PENDING' AND next_attempt_at <= $1
        RETURNING ${COLUMNS}`,
      [now, leaseUntil, limit],
    ),
  );
  return rows.map(deliveryOf);
}

/** Claims one delivery if its next attempt is due by `now` (a timer of this replica went off). */
export async function claimDelivery(manager: EntityManager, id: string, now: Date, leaseUntil: Date): Promise<ClaimedDelivery | null> {
  const [row] = returningRows<RawDelivery>(
    await manager.query(
      `UPDATE callback_deliveries SET next_attempt_at = $3, updated_at = $2
        WHERE id = $1 AND status = 'PENDING' AND next_attempt_at <= $2
        RETURNING ${COLUMNS}`,
      [id, now, leaseUntil],
    ),
  );
  return row ? deliveryOf(row) : null;
}

/**
 * Gives back claims this replica will not attempt (it is stopping): each delivery still at the
 * attempt and the lease it was claimed with becomes due now, so any replica's sweep takes it.
 * Returns how many were given back.
 */
export async function releaseDeliveries(manager: EntityManager, claims: ReadonlyArray<{ id: string; attemptsMade: number; leaseUntil: Date }>, now = new Date()): Promise<number> {
  // A claim given back is one renewed to end now.
  return (await renewClaims(manager, claims, now, now)).size;
}

/**
 * Extends claims this replica still holds (the delivery at the attempt and the lease it was
 * claimed with) to `leaseUntil`; a claim another replica took after its lease ran out is not
 * touched. Returns the ids renewed.
 */
export async function renewClaims(manager: EntityManager, claims: ReadonlyArray<{ id: string; attemptsMade: number; leaseUntil: Date }>, now: Date, leaseUntil: Date): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = returningRows<{ id: string }>(
    await manager.query(
      `UPDATE callback_deliveries d SET next_attempt_at = $4::timestamptz, updated_at = $5::timestamptz
         FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) AS c(id, attempts_made, lease_until)
        WHERE d.id = c.id AND d.status = 'PENDING' AND d.attempts_made = c.attempts_made AND d.next_attempt_at = c.lease_until
        RETURNING d.id`,
      [claims.map((c) => c.id), claims.map((c) => c.attemptsMade), claims.map((c) => c.leaseUntil), leaseUntil, now],
    ),
  );
  return new Set(rows.map((row) => row.id));
}

/** PENDING deliveries due by `horizon` (for timers), earliest first. */
export async function dueSoon(manager: EntityManager, horizon: Date, limit: number): Promise<Array<{ id: string; nextAttemptAt: Date }>> {
  const rows = returningRows<{ id: string; next_attempt_at: Date }>(
    await manager.query(
      `SELECT id, next_attempt_at FROM callback_deliveries
        WHERE status = 'PENDING' AND next_attempt_at <= $1
        ORDER BY next_attempt_at LIMIT $2`,
      [horizon, limit],
    ),
  );
  return rows.map((row) => ({ id: row.id, nextAttemptAt: row.next_attempt_at }));
}

/**
 * Records attempts and moves their deliveries on. Returns the records that applied: an attempt
 * whose delivery is no longer at the attempt before it (recorded already by a replica that
 * repeated it after this one's lease ran out) changes nothing.
 */
export async function recordAttempts(manager: EntityManager, records: readonly AttemptRecord[], now: Date): Promise<AttemptRecord[]> {
  if (records.length === 0) return [];
  const applied = returningRows<{ id: string }>(
    await manager.query(
      `UPDATE callback_deliveries d
          SET status = u.status, attempts_made = u.attempt, next_attempt_at = u.next_attempt_at, updated_at = $5::timestamptz,
              completed_at = CASE WHEN u.status = 'PENDING' THEN NULL ELSE $5::timestamptz END
         FROM unnest($1::uuid[], $2::int[], $3::text[], $4::timestamptz[]) AS u(id, attempt, status, next_attempt_at)
        WHERE d.id = u.id AND d.status = 'PENDING' AND d.attempts_made = u.attempt - 1
        RETURNING d.id`,
      [records.map((r) => r.deliveryId), records.map((r) => r.attempt), records.map((r) => r.status), records.map((r) => r.nextAttemptAt), now],
    ),
  );
  const ids = new Set(applied.map((row) => row.id));
  const kept = records.filter((record) => ids.has(record.deliveryId));
  if (kept.length > 0) {
    await manager.query(
      `INSERT INTO callback_attempts (delivery_id, attempt, attempted_at, duration_ms, outcome, status_code, error)
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::text[], $6::int[], $7::text[])
       ON CONFLICT DO NOTHING`,
      [
        kept.map((r) => r.deliveryId),
        kept.map((r) => r.attempt),
        kept.map((r) => r.attemptedAt),
        kept.map((r) => r.durationMs),
        kept.map((r) => r.outcome),
        kept.map((r) => r.statusCode),
        kept.map((r) => r.error),
      ],
    );
  }
  return kept;
}

function deliveryOf(row: RawDelivery): ClaimedDelivery {
  return {
    id: row.id,
    invocationId: row.invocation_id,
    orgId: row.org_id,
    projectId: row.project_id,
    url: row.url,
    sealedSecret: row.sealed_secret,
    body: row.body,
    runStatus: row.run_status,
    correlationId: row.correlation_id,
    traceparent: row.traceparent,
    attemptsMade: row.attempts_made,
  };
}
