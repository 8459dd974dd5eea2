import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's template library: saved request bodies for one of the six run endpoints of a
 * project. `body` is `json`, not `jsonb`, so the keys keep the order the user typed them in
 * (the request example shows the body as saved).
 */
export class CreateRequestTemplates1763700000041 implements MigrationInterface {
  name = 'CreateRequestTemplates1763700000041';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE request_templates (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        endpoint text NOT NULL CHECK (endpoint IN ('bots.message', 'bots.invoke', 'flows.trigger', 'flows.trigger-async',
                                                   'automations.trigger', 'automations.trigger-async')),
        body json NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX request_templates_project_idx ON request_templates (project_id, created_at, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE request_templates`);
  }
}
