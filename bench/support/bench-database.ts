import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface BenchDatabase {
  url: string;
  /** For the report: which database was used (no credentials). */
  description: string;
  /** Drops the database if the benchmark created it; leaves a given DATABASE_URL alone. */
  drop(): Promise<void>;
}

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * DATABASE_URL when set (the gateway migrates it and the benchmark adds one organization);
 * otherwise a fresh database on BENCH_POSTGRES_ADMIN_URL's server (default the local server),
 * dropped afterwards.
 */
export async function openBenchDatabase(env: NodeJS.ProcessEnv): Promise<BenchDatabase> {
  if (env.DATABASE_URL) {
    const given = new URL(env.DATABASE_URL);
    return { url: env.DATABASE_URL, description: `DATABASE_URL (${given.host}${given.pathname})`, drop: async () => undefined };
  }
  const adminUrl = env.BENCH_POSTGRES_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  const name = `runline_bench_${randomBytes(5).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    description: `fresh database ${name} on ${url.host}, dropped afterwards`,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
