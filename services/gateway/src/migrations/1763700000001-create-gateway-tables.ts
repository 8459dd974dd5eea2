import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateGatewayTables1763700000001 implements MigrationInterface {
  name = 'CreateGatewayTables1763700000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        monthly_quota bigint NULL CHECK (monthly_quota >= 0),
        rate_limit_per_minute integer NULL CHECK (rate_limit_per_minute > 0),
        rate_limit_window_ms bigint NULL CHECK (rate_limit_window_ms > 0),
        renewal_day smallint NULL CHECK (renewal_day BETWEEN 1 AND 28),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE memberships (
        org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        user_id text NOT NULL,
        role text NOT NULL CHECK (role IN ('OWNER', 'EDITOR', 'VIEWER')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, user_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        name text NOT NULL,
        type text NOT NULL CHECK (type IN ('CHATBOT', 'AUTOMATION')),
        draft_definition jsonb NULL,
        draft_updated_at timestamptz NULL,
        published_definition jsonb NULL,
        published_version integer NOT NULL DEFAULT 0,
        published_at timestamptz NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz NULL
      )`);
    await queryRunner.query(`CREATE INDEX projects_org_idx ON projects (org_id)`);
    await queryRunner.query(`
      CREATE TABLE project_api_settings (
        project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        external_api_enabled boolean NOT NULL DEFAULT true,
        default_enrollment_policy text NOT NULL DEFAULT 'ONE_TIME'
          CHECK (default_enrollment_policy IN ('ONE_TIME', 'EVERY_MATCH')),
        default_on_error_policy text NOT NULL DEFAULT 'ABORT'
          CHECK (default_on_error_policy IN ('ABORT', 'CONTINUE')),
        default_callback_url text NULL,
        default_callback_secret_sealed text NULL,
        rate_limit_per_minute integer NULL CHECK (rate_limit_per_minute > 0),
        rate_limit_window_ms bigint NULL CHECK (rate_limit_window_ms > 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE api_tokens (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        prefix text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        scopes text[] NOT NULL,
        expires_at timestamptz NULL,
        revoked_at timestamptz NULL,
        last_used_at timestamptz NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX api_tokens_project_idx ON api_tokens (project_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_tokens`);
    await queryRunner.query(`DROP TABLE project_api_settings`);
    await queryRunner.query(`DROP TABLE projects`);
    await queryRunner.query(`DROP TABLE memberships`);
    await queryRunner.query(`DROP TABLE organizations`);
  }
}
