import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Managed webhook subscriptions: webhooks Runline created at a provider (Stripe, Shopify,
 * GitHub) for a project.
 *
 * The credentials and the provider's signing secret are stored sealed (SecretBox), never in
 * clear. `attempt_until` is set while a create or retry is talking to the provider (a lease: a
 * process that dies mid-call leaves it to run out), so two tries never run at once. Deliveries
 * are deduplicated in `hook_deliveries`, keyed by the subscription's id like a hook's.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateWebhookSubscriptions1763700000702 implements MigrationInterface {
  name = 'CreateWebhookSubscriptions1763700000702';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        provider text NOT NULL,
        events text[] NOT NULL,
        status text NOT NULL CHECK (status IN ('ACTIVE', 'FAILED', 'REVOKED')),
        endpoint text NOT NULL,
        provider_id text NULL,
        failure_reason text NULL,
        sealed_credentials text NOT NULL,
        sealed_signing_secret text NULL,
        attempt_until timestamptz NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz NULL
      )`);
    await queryRunner.query(`CREATE INDEX webhook_subscriptions_project_idx ON webhook_subscriptions (project_id, created_at DESC, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_subscriptions`);
  }
}
