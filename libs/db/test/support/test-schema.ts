import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { CreateOutboxAndInbox1763700000000, createServiceDataSource, migrate, type ServiceDataSourceOptions } from '../../src/index.js';

/** Tables the integration tests change as "state". Unqualified on purpose: search_path places them. */
export class CreateTestTables1763700000001 implements MigrationInterface {
  name = 'CreateTestTables1763700000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE orders (id text PRIMARY KEY, status text NOT NULL)`);
    await queryRunner.query(`CREATE TABLE counters (name text PRIMARY KEY, value integer NOT NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE counters`);
    await queryRunner.query(`DROP TABLE orders`);
  }
}

export const TEST_MIGRATIONS = [CreateOutboxAndInbox1763700000000, CreateTestTables1763700000001];

export const TEST_SUBJECT = 'dbtest.evt.order-created';

export function testDataSource(url: string, schema: string, extra: Partial<ServiceDataSourceOptions> = {}): DataSource {
  return createServiceDataSource({ url, schema, migrations: TEST_MIGRATIONS, ...extra });
}

/** An initialised data source on a migrated schema. */
export async function migratedDataSource(url: string, schema: string, extra: Partial<ServiceDataSourceOptions> = {}): Promise<DataSource> {
  const dataSource = testDataSource(url, schema, extra);
  await dataSource.initialize();
  await migrate(dataSource);
  return dataSource;
}

export function orderEvent(eventId: string, orderId: string): { id: string; subject: string; data: Uint8Array; headers: Record<string, string> } {
  return {
    id: eventId,
    subject: TEST_SUBJECT,
    data: new TextEncoder().encode(JSON.stringify({ orderId })),
    headers: { 'content-type': 'application/json' },
  };
}
