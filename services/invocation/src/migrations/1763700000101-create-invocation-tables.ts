import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateInvocationTables1763700000101 implements MigrationInterface {
  name = 'CreateInvocationTables1763700000101';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The invocation read model: what GET /external-invocations/{id} returns, as a document.
    await queryRunner.query(`
      CREATE TABLE invocation_views (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        started_by_token_id uuid NULL,
        target_type text NOT NULL,
        document jsonb NOT NULL,
        sequence bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX invocation_views_org_idx ON invocation_views (org_id, created_at DESC)`);
    // Copies of the gateway's organizations and projects, kept from its events.
    await queryRunner.query(`
      CREATE TABLE organization_copies (
        org_id uuid PRIMARY KEY,
        name text NOT NULL DEFAULT '',
        monthly_quota bigint NULL,
        rate_limit_per_minute integer NULL,
        rate_limit_window_ms bigint NULL,
        renewal_day smallint NULL,
        plan_changed_at timestamptz NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE project_copies (
        project_id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        name text NOT NULL DEFAULT '',
        type text NULL,
        external_api_enabled boolean NOT NULL DEFAULT true,
        default_enrollment_policy text NOT NULL DEFAULT 'ONE_TIME',
        default_on_error_policy text NOT NULL DEFAULT 'ABORT',
        default_callback_url text NULL,
        default_callback_secret_sealed text NULL,
        settings_changed_at timestamptz NULL,
        published_version integer NOT NULL DEFAULT 0,
        published_definition jsonb NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE project_copies`);
    await queryRunner.query(`DROP TABLE organization_copies`);
    await queryRunner.query(`DROP TABLE invocation_views`);
  }
}
