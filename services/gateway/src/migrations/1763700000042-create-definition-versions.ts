import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every published definition, kept: the console's version history (who published which
 * version, when) and the graph of the version a run used. `definition` is `json`, not `jsonb`,
 * so the keys keep the order the user typed them in, as `projects` keeps them.
 *
 * Existing projects get their current published definition as the one version known
 * (published by nobody we can name: `published_by` null).
 */
export class CreateDefinitionVersions1763700000042 implements MigrationInterface {
  name = 'CreateDefinitionVersions1763700000042';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE definition_versions (
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version > 0),
        definition json NOT NULL,
        published_by text,
        published_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, version)
      )`);
    await queryRunner.query(`
      INSERT INTO definition_versions (project_id, version, definition, published_by, published_at)
      SELECT id, published_version, published_definition::json, NULL, coalesce(published_at, created_at)
        FROM projects WHERE published_version > 0 AND published_definition IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE definition_versions`);
  }
}
