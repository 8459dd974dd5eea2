import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { Inbox, INBOX_PRUNE_BATCH, IndexInboxProcessedAt1763700000900, InboxPruner } from '../src/index.js';
import { migratedDataSource, TEST_MIGRATIONS } from './support/test-schema.js';

const SCHEMA = 'inboxprune';
const DAY_MS = 86_400_000;

/** Processed message ids are dropped once past the redelivery horizon, never before. */
describe('inbox pruner (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    // As every service migrates it: the inbox with the pruner's index.
    dataSource = await migratedDataSource(db.url, SCHEMA, { migrations: [...TEST_MIGRATIONS, IndexInboxProcessedAt1763700000900] });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const processedAgo = (count: number, days: number, prefix: string) =>
    dataSource.query(
      `INSERT INTO ${SCHEMA}.inbox (consumer, message_id, processed_at)
       SELECT 'projector', $1 || i, now() - $2::int * interval '1 day' FROM generate_series(1, $3) AS i`,
      [prefix, days, count],
    );
  const remaining = async (prefix: string) =>
    (await dataSource.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.inbox WHERE message_id LIKE $1`, [`${prefix}%`]))[0].n;

  it('deletes rows older than the retention in batches, keeps recent ones, and a redelivery within the horizon is still ignored', async () => {
    await processedAgo(INBOX_PRUNE_BATCH * 2 + 500, 31, 'old-');
    await processedAgo(300, 29, 'recent-');
    const pruner = new InboxPruner(dataSource, { retentionMs: 30 * DAY_MS });

    expect(await pruner.prune()).toBe(INBOX_PRUNE_BATCH * 2 + 500);
    expect(await remaining('old-')).toBe(0);
    expect(await remaining('recent-')).toBe(300);
    expect(await dataSource.transaction((manager) => Inbox.runOnce(manager, 'projector', 'recent-7'))).toBe(false);
    expect(await pruner.prune()).toBe(0);
  });

  it('refuses a retention that is not a positive whole number of milliseconds', () => {
    expect(() => new InboxPruner(dataSource, { retentionMs: 0 })).toThrow(/retentionMs must be a positive integer/);
  });
});
