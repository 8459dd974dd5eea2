import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Definitions are stored as `json`, not `jsonb`: jsonb reorders object keys (shorter keys
 * first), and the order of a trigger's `expectedPayload` keys is what clients see in trigger
 * check messages and dry-run validations. `json` keeps the document as it was saved.
 */
export class KeepDefinitionKeyOrder1763700000002 implements MigrationInterface {
  name = 'KeepDefinitionKeyOrder1763700000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projects ALTER COLUMN draft_definition TYPE json USING draft_definition::json`);
    await queryRunner.query(`ALTER TABLE projects ALTER COLUMN published_definition TYPE json USING published_definition::json`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projects ALTER COLUMN draft_definition TYPE jsonb USING draft_definition::jsonb`);
    await queryRunner.query(`ALTER TABLE projects ALTER COLUMN published_definition TYPE jsonb USING published_definition::jsonb`);
  }
}
