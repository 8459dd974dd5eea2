import { readFileSync } from 'node:fs';
import pg from 'pg';
import { processCpuSeconds } from './child-server.js';

/** Starts a measurement; the function it returns gives the CPU seconds used since, if known. */
export interface CpuMeter {
  start(): Promise<() => Promise<number | undefined>>;
}

/**
 * CPU of the PostgreSQL backends serving the benchmark database (one process per connection,
 * found in pg_stat_activity), read from /proc. On two cores PostgreSQL competes with the system
 * for the same CPU, so its cost per request belongs next to the system's. Reads nothing (undefined)
 * when the server is not a local process this user may inspect.
 */
export class PostgresBackendsCpu implements CpuMeter {
  private constructor(
    private readonly client: pg.Client,
    private readonly excluded: ReadonlySet<number>,
  ) {}

  /** `exclude`: backends of the benchmark's own connections (idle while load runs, but not free). */
  static async open(databaseUrl: string, exclude: number[] = []): Promise<PostgresBackendsCpu> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new PostgresBackendsCpu(client, new Set(exclude));
  }

  async start(): Promise<() => Promise<number | undefined>> {
    const before = await this.snapshot();
    return async () => {
      const after = await this.snapshot();
      if (!before || !after) return undefined;
      let seconds = 0;
      // A backend that appeared meanwhile (the pool grew) used all its CPU inside the window.
      for (const [pid, used] of after) seconds += used - (before.get(pid) ?? 0);
      return seconds;
    };
  }

  close(): Promise<void> {
    return this.client.end();
  }

  private async snapshot(): Promise<Map<number, number> | undefined> {
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const backends = rows.map((row) => row.pid).filter((pid) => !this.excluded.has(pid));
    const used = new Map<number, number>();
    for (const pid of backends) {
      // Not readable: gone since the query (a pool closed it), or not a local process at all.
      const seconds = isPostgres(pid) ? processCpuSeconds(pid) : undefined;
      if (seconds !== undefined) used.set(pid, seconds);
    }
    return backends.length > 0 && used.size === 0 ? undefined : used;
  }
}

/** Guards against a remote server whose backend pid happens to exist here. */
function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
}
