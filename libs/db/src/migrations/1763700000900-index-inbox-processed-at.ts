import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualified, serviceSchemaOf } from '../service-schema.js';

/** Lets InboxPruner find the oldest processed message ids without reading the whole inbox. */
export class IndexInboxProcessedAt1763700000900 implements MigrationInterface {
  name = 'IndexInboxProcessedAt1763700000900';

  async up(queryRunner: QueryRunner): Promise<void> {
    const inbox = qualified(serviceSchemaOf(queryRunner.dataSource), 'inbox');
    await queryRunner.query(`CREATE INDEX inbox_processed_at_idx ON ${inbox} (processed_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ${qualified(serviceSchemaOf(queryRunner.dataSource), 'inbox_processed_at_idx')}`);
  }
}
