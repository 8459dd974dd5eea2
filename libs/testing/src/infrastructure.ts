import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Server used by integration tests; each test file gets its own database on it. */
export const testPostgresAdminUrl = (): string =>
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** NATS with JetStream used by integration tests; isolated by a subject prefix per test. */
export const testNatsUrl = (): string => process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A short random token that is safe in database names, NATS subjects and stream names. */
export const uniqueSuffix = (): string => randomBytes(5).toString('hex');

/** A bus prefix no other run uses, so streams and subjects never collide. */
export const uniqueBusPrefix = (): string => `t${uniqueSuffix()}`;

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates an empty database on the test server; `drop()` removes it, ending its connections. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = testPostgresAdminUrl();
  const name = `runline_test_${uniqueSuffix()}`;
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await withAdminClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

async function withAdminClient<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  // A connection cut from outside (the fault tests terminate backends) is reported to the query
  // in flight; without a listener the same error, arriving between queries, would crash the run.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs one statement on a test database and returns its rows (tests that look under the hood). */
export async function queryDatabase(url: string, sql: string, parameters: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url });
  // A connection cut from outside (the fault tests terminate backends) is reported to the query
  // in flight; without a listener the same error, arriving between queries, would crash the run.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql, parameters)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}
