import type { MigrationInterface, QueryRunner } from 'typeorm';
import { qualified, serviceSchemaOf } from '../service-schema.js';

/**
 * The transactional outbox and the consumer inbox. Every service lists this migration FIRST in
 * its migrations; it creates the tables in the service's own schema.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateOutboxAndInbox1763700000000 implements MigrationInterface {
  name = 'CreateOutboxAndInbox1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const schema = serviceSchemaOf(queryRunner.dataSource);
    const outbox = qualified(schema, 'outbox');
    const inbox = qualified(schema, 'inbox');
    // sequence orders publication; id (the message id) is the bus's dedupe key.
    await queryRunner.query(`
      CREATE TABLE ${outbox} (
        id           text        PRIMARY KEY,
        sequence     bigserial   NOT NULL,
        subject      text        NOT NULL,
        data         bytea       NOT NULL,
        headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
        created_at   timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz NULL,
        attempts     integer     NOT NULL DEFAULT 0,
        last_error   text        NULL
      )`);
    // The relay's claim query reads only unpublished rows, in sequence order.
    await queryRunner.query(`CREATE INDEX outbox_unpublished_idx ON ${outbox} (sequence) WHERE published_at IS NULL`);
    // Pruning deletes published rows by age.
    await queryRunner.query(`CREATE INDEX outbox_published_at_idx ON ${outbox} (published_at) WHERE published_at IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE ${inbox} (
        consumer     text        NOT NULL,
        message_id   text        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, message_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const schema = serviceSchemaOf(queryRunner.dataSource);
    await queryRunner.query(`DROP TABLE ${qualified(schema, 'inbox')}`);
    await queryRunner.query(`DROP TABLE ${qualified(schema, 'outbox')}`);
  }
}
