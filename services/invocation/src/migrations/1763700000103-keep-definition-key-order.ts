import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The copy of published definitions keeps the document's key order (`json`, not `jsonb`): the
 * order of a trigger's `expectedPayload` keys is what clients see in trigger check messages.
 */
export class KeepDefinitionKeyOrder1763700000103 implements MigrationInterface {
  name = 'KeepDefinitionKeyOrder1763700000103';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE project_copies ALTER COLUMN published_definition TYPE json USING published_definition::json`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE project_copies ALTER COLUMN published_definition TYPE jsonb USING published_definition::jsonb`);
  }
}
