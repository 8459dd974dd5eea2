import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/index.js';

const asRoot = process.getuid?.() === 0;

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('startEmbeddedPostgres (real PostgreSQL binaries)', () => {
  let workDir: string;
  const running: EmbeddedPostgres[] = [];

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'runline-embedded-pg-'));
    // mkdtemp makes 0700; the server (as the postgres user when we are root) must get through.
    await chmod(workDir, 0o755);
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.stop()));
  });

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('initialises a cluster on first start, and finds its data again after a restart', async () => {
    // Two levels that do not exist yet, like `<repo>/.runline/pgdata` in a fresh checkout.
    const dataDir = path.join(workDir, '.runline', 'pgdata');
    const lines: string[] = [];

    const first = await startEmbeddedPostgres({ dataDir, log: (line) => lines.push(line) });
    running.push(first);
    expect(first.url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/runline$/);
    expect(await query<{ one: number }>(first.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await query(first.url, `CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')`);
    const [{ encoding }] = await query<{ encoding: string }>(first.url, `SELECT pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = 'runline'`);
    expect(encoding).toBe('UTF8');
    expect(lines.some((line) => line.includes('ready to accept connections'))).toBe(true);
    await first.stop();
    await first.stop(); // idempotent
    running.pop();
    await expect(query(first.url, 'SELECT 1')).rejects.toThrow();

    const second = await startEmbeddedPostgres({ dataDir });
    running.push(second);
    expect(await query<{ value: string }>(second.url, 'SELECT value FROM kept')).toEqual([{ value: 'still here' }]);

    const info = await stat(dataDir);
    expect(info.mode & 0o777).toBe(0o700);
    if (asRoot) {
      const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
      expect(info.uid).toBe(postgresUid);
    }
  });

  it('serves only the port it was given, with a password', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const server = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'fixed-port'), port, database: 'other' });
    running.push(server);

    expect(server.url).toContain(`@127.0.0.1:${port}/other`);
    const withoutPassword = new URL(server.url);
    withoutPassword.password = '';
    await expect(query(withoutPassword.toString(), 'SELECT 1')).rejects.toThrow(/password/);
  });

  it('explains why a second server cannot use a data directory that is in use', async () => {
    const dataDir = path.join(workDir, 'shared');
    running.push(await startEmbeddedPostgres({ dataDir }));

    await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(/server did not start[\s\S]*postmaster\.pid/);
  });

  (asRoot ? it : it.skip)('as root, names the directory that keeps the postgres user out', async () => {
    const privateDir = path.join(workDir, 'private');
    await mkdir(privateDir, { mode: 0o700 });
    await chmod(privateDir, 0o700);

    await expect(startEmbeddedPostgres({ dataDir: path.join(privateDir, 'pgdata') })).rejects.toThrow(
      new RegExp(`cannot reach .*: ${privateDir} does not let it through`),
    );
  });
});
