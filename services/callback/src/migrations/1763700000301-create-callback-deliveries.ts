import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries (one per run that calls back) and their attempts. A PENDING delivery's
 * `next_attempt_at` is when its next attempt may start; while a replica attempts it, it is the
 * end of that replica's lease, so a replica that dies mid-attempt (or between attempts: the
 * time is persisted) leaves the delivery to be picked up again after a restart.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateCallbackDeliveries1763700000301 implements MigrationInterface {
  name = 'CreateCallbackDeliveries1763700000301';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE callback_deliveries (
        -- The DeliverCallback envelope id: the Standard Webhooks webhook-id, stable across attempts.
        id uuid PRIMARY KEY,
        invocation_id uuid NOT NULL UNIQUE,
        org_id text NOT NULL,
        project_id text NOT NULL,
        url text NOT NULL,
        -- Sealed with SECRETS_KEY; NULL: the callback is not signed.
        sealed_secret text NULL,
        -- The exact bytes sent (already redacted by the invocation service).
        body bytea NOT NULL,
        run_status text NOT NULL,
        status text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
        attempts_made integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NULL,
        correlation_id text NULL,
        traceparent text NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        completed_at timestamptz NULL,
        CONSTRAINT callback_deliveries_pending_check CHECK ((status = 'PENDING') = (next_attempt_at IS NOT NULL))
      )`);
    await queryRunner.query(
      `CREATE INDEX callback_deliveries_due_idx ON callback_deliveries (next_attempt_at) WHERE status = 'PENDING'`,
    );
    await queryRunner.query(`
      CREATE TABLE callback_attempts (
        delivery_id uuid NOT NULL REFERENCES callback_deliveries (id),
        attempt integer NOT NULL,
        attempted_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL,
        status_code integer NULL,
        error text NULL,
        PRIMARY KEY (delivery_id, attempt)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE callback_attempts`);
    await queryRunner.query(`DROP TABLE callback_deliveries`);
  }
}
