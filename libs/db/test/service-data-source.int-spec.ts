import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { assertMigrated, createServiceDataSource, handleConnectionCuts, migrate, pendingMigrations, SchemaNotMigratedError } from '../src/index.js';
import { TEST_MIGRATIONS, testDataSource } from './support/test-schema.js';

describe('service data source and migrations (real PostgreSQL)', () => {
  let db: TestDatabase;
  const open: DataSource[] = [];

  const track = async (dataSource: DataSource): Promise<DataSource> => {
    open.push(dataSource);
    if (!dataSource.isInitialized) await dataSource.initialize();
    return dataSource;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((dataSource) => (dataSource.isInitialized ? dataSource.destroy() : undefined)));
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('a connection cut while it is checked out between two queries is reported to the listener and fails the next query, without an unhandled error', async () => {
    const dataSource = await track(createServiceDataSource({ url: db.url, schema: 'cuts', migrations: [] }));
    const cuts: Error[] = [];
    handleConnectionCuts(dataSource, (error) => cuts.push(error));
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ pid }] = (await runner.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
      // Checked out and idle: node-postgres has removed the pool's own listener from this client.
      await dataSource.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let waited = 0; cuts.length === 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(cuts.map((error) => (error as Error & { code?: string }).code)).toEqual(['57P01']);
      await expect(runner.query('SELECT 1')).rejects.toThrow();
    } finally {
      await runner.release().catch(() => undefined);
    }
    // The pool goes on with fresh connections.
    expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  const tablesOf = async (dataSource: DataSource, schema: string): Promise<string[]> => {
    const rows = await dataSource.query<Array<{ table_name: string }>>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    return rows.map((row) => row.table_name);
  };

  it('refuses to start on an unmigrated schema, without creating anything', async () => {
    const dataSource = await track(testDataSource(db.url, 'unmigrated'));

    await expect(pendingMigrations(dataSource)).resolves.toEqual(['CreateOutboxAndInbox1763700000000', 'CreateTestTables1763700000001']);
    const error = await assertMigrated(dataSource).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SchemaNotMigratedError);
    expect((error as Error).message).toMatch(/schema "unmigrated" is not migrated: 2 pending migration\(s\): CreateOutboxAndInbox1763700000000, CreateTestTables1763700000001/);

    const schemas = await dataSource.query<unknown[]>(`SELECT 1 FROM information_schema.schemata WHERE schema_name = 'unmigrated'`);
    expect(schemas).toHaveLength(0);
  });

  it('creates the schema, runs pending migrations once, and keeps everything in the service schema', async () => {
    const dataSource = await track(testDataSource(db.url, 'alpha'));

    await expect(migrate(dataSource)).resolves.toEqual(['CreateOutboxAndInbox1763700000000', 'CreateTestTables1763700000001']);
    await expect(migrate(dataSource)).resolves.toEqual([]);
    await expect(assertMigrated(dataSource)).resolves.toBeUndefined();

    expect(await tablesOf(dataSource, 'alpha')).toEqual(['counters', 'inbox', 'migrations', 'orders', 'outbox']);
    expect(await tablesOf(dataSource, 'public')).toEqual([]);
    // Raw SQL without a schema lands in the service schema too (search_path).
    await dataSource.query(`CREATE TABLE scratch (id int)`);
    expect(await tablesOf(dataSource, 'alpha')).toContain('scratch');
    const [{ search_path: searchPath }] = await dataSource.query<Array<{ search_path: string }>>('SHOW search_path');
    expect(searchPath).toBe('alpha');
  });

  it('gives every service its own migrations table', async () => {
    const beta = await track(testDataSource(db.url, 'beta'));
    const gamma = await track(createServiceDataSource({ url: db.url, schema: 'gamma', migrations: [TEST_MIGRATIONS[0]] }));

    await expect(migrate(beta)).resolves.toHaveLength(2);
    await expect(migrate(gamma)).resolves.toEqual(['CreateOutboxAndInbox1763700000000']);
    const betaRan = await beta.query<Array<{ name: string }>>(`SELECT name FROM beta.migrations ORDER BY id`);
    const gammaRan = await gamma.query<Array<{ name: string }>>(`SELECT name FROM gamma.migrations ORDER BY id`);
    expect(betaRan.map((row) => row.name)).toEqual(['CreateOutboxAndInbox1763700000000', 'CreateTestTables1763700000001']);
    expect(gammaRan.map((row) => row.name)).toEqual(['CreateOutboxAndInbox1763700000000']);
  });

  it('lets several processes migrate at once: one runs the migrations, the others find nothing to do', async () => {
    // Separate data sources with one connection each, as separate processes would have.
    const contenders = await Promise.all(
      Array.from({ length: 4 }, () => track(testDataSource(db.url, 'delta', { poolSize: 1 }))),
    );

    const results = await Promise.all(contenders.map((dataSource) => migrate(dataSource)));

    expect(results.filter((ran) => ran.length === 2)).toHaveLength(1);
    expect(results.filter((ran) => ran.length === 0)).toHaveLength(3);
    const rows = await contenders[0].query<unknown[]>(`SELECT name FROM delta.migrations`);
    expect(rows).toHaveLength(2);
  });

  it('rolls back a failed run entirely, schema included', async () => {
    class Broken1763700000002 {
      name = 'Broken1763700000002';
      async up(queryRunner: { query(sql: string): Promise<unknown> }): Promise<void> {
        await queryRunner.query('SELECT * FROM no_such_table');
      }
      async down(): Promise<void> {}
    }
    const dataSource = await track(
      createServiceDataSource({ url: db.url, schema: 'epsilon', migrations: [...TEST_MIGRATIONS, Broken1763700000002] }),
    );

    await expect(migrate(dataSource)).rejects.toThrow(/no_such_table/);
    const schemas = await dataSource.query<unknown[]>(`SELECT 1 FROM information_schema.schemata WHERE schema_name = 'epsilon'`);
    expect(schemas).toHaveLength(0);
    await expect(pendingMigrations(dataSource)).resolves.toHaveLength(3);
  });

  it('runs unqualified SQL in the service schema', async () => {
    const dataSource = await track(
      createServiceDataSource({ url: db.url, schema: 'zeta', migrations: TEST_MIGRATIONS }),
    );
    await migrate(dataSource);
    await dataSource.query(`CREATE TABLE widgets (id text PRIMARY KEY, name text NOT NULL)`);

    await dataSource.query(`INSERT INTO widgets (id, name) VALUES ($1, $2)`, ['w1', 'sprocket']);

    const rows = await dataSource.query<Array<{ name: string }>>(`SELECT name FROM zeta.widgets`);
    expect(rows).toEqual([{ name: 'sprocket' }]);
  });

  it('rejects schema names it cannot use safely', () => {
    expect(() => createServiceDataSource({ url: db.url, schema: 'Bad-Name', migrations: [] })).toThrow(/invalid schema name/);
    expect(() => createServiceDataSource({ url: db.url, schema: 'x; DROP', migrations: [] })).toThrow(/invalid schema name/);
  });
});
