import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Async runs in the invocation service's write model, by state. */
export interface AsyncRunCounts {
  /** QUEUED or RUNNING. */
  open: number;
  succeeded: number;
  /** Any other final state (FAILED, TIMEOUT, …): the run did not do what the benchmark asked. */
  failed: number;
  /** SUSPENDED and anything else not covered above. */
  other: number;
  finished: number;
}

export interface DrainResult {
  done: boolean;
  seconds: number;
  /** When the wait began. */
  before: AsyncRunCounts;
  after: AsyncRunCounts;
}

const POLL_MS = 100;

/**
 * Watches the async runs the benchmark started by reading `invocation.invocations` directly:
 * only between load runs, never while one is measured.
 */
export class AsyncRuns {
  private constructor(
    private readonly client: pg.Client,
    /** The PostgreSQL backend of this watcher's connection (to leave out of CPU figures). */
    readonly backendPid: number,
  ) {}

  static async open(databaseUrl: string): Promise<AsyncRuns> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return new AsyncRuns(client, rows[0]?.pid ?? -1);
  }

  async counts(): Promise<AsyncRunCounts> {
    const { rows } = await this.client.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM invocation.invocations WHERE mode = 'ASYNC' GROUP BY status`,
    );
    const counts: AsyncRunCounts = { open: 0, succeeded: 0, failed: 0, other: 0, finished: 0 };
    for (const { status, n } of rows) {
      if (status === 'QUEUED' || status === 'RUNNING') counts.open += n;
      else if (status === 'SUCCEEDED') counts.succeeded += n;
      else if (status === 'FAILED' || status === 'TIMEOUT' || status === 'CANCELLED') counts.failed += n;
      else counts.other += n;
    }
    counts.finished = counts.succeeded + counts.failed;
    return counts;
  }

  /** Waits until no async run is queued or running, or until the timeout. */
  async waitUntilDone(timeoutMs: number): Promise<DrainResult> {
    const started = performance.now();
    const before = await this.counts();
    let after = before;
    while (after.open > 0 && performance.now() - started < timeoutMs) {
      await sleep(POLL_MS);
      after = await this.counts();
    }
    return { done: after.open === 0, seconds: (performance.now() - started) / 1000, before, after };
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
