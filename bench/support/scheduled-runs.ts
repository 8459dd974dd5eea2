import pg from 'pg';

/** How many scheduled runs wait, as the invocation read model and the scheduler each see it. */
export interface PendingCounts {
  /** invocation.invocation_views rows whose document has status SCHEDULED. */
  readModel: number;
  /** scheduler.scheduled_jobs rows still SCHEDULED (not fired, not cancelled). */
  schedulerJobs: number;
}

/**
 * One scheduled run as the benchmark reads it afterwards: the read model's times (ISO strings,
 * millisecond precision, turned into epoch ms) and its scheduler job's. NaN where a time is
 * not there (a run that has not started, a job that has not fired).
 */
export interface ScheduledRunTimes {
  invocationId: string;
  status: string;
  scheduledFor: number;
  startedAt: number;
  completedAt: number;
  /** scheduled_jobs.due_at */
  jobDueAt: number;
  /** scheduled_jobs.fired_at: when the scheduler's firing pass claimed the job. */
  jobFiredAt: number;
}

/**
 * Reads the benchmark database directly (invocation's read model and the scheduler's job
 * table), as an observer: never while a measured window runs, except the one pending count
 * just before it.
 */
export class ScheduledRunsStore {
  private constructor(
    private readonly client: pg.Client,
    /** The PostgreSQL backend of this connection (to leave out of CPU figures). */
    readonly backendPid: number,
  ) {}

  static async open(databaseUrl: string): Promise<ScheduledRunsStore> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return new ScheduledRunsStore(client, rows[0]?.pid ?? -1);
  }

  async pendingCounts(): Promise<PendingCounts> {
    const { rows } = await this.client.query<{ read_model: number; scheduler_jobs: number }>(
      // `status` is the read model's column generated from the document: an index-only count,
      // under a second with 1,000,000 runs (reading every document took seconds).
      `SELECT (SELECT count(*)::int FROM invocation.invocation_views WHERE status = 'SCHEDULED') AS read_model,
              (SELECT count(*)::int FROM scheduler.scheduled_jobs WHERE status = 'SCHEDULED') AS scheduler_jobs`,
    );
    return { readModel: rows[0]?.read_model ?? 0, schedulerJobs: rows[0]?.scheduler_jobs ?? 0 };
  }

  /** The scheduler's jobs of any status: how many ScheduleJob commands it has recorded. */
  async schedulerJobCount(): Promise<number> {
    const { rows } = await this.client.query<{ n: number }>('SELECT count(*)::int AS n FROM scheduler.scheduled_jobs');
    return rows[0]?.n ?? 0;
  }

  /** The runs `invocationIds` name, with their jobs (joined by the job name the read model holds). */
  async runTimes(invocationIds: string[]): Promise<ScheduledRunTimes[]> {
    const { rows } = await this.client.query<{
      id: string;
      status: string;
      scheduled_for: string | null;
      started_at: string | null;
      completed_at: string | null;
      due_ms: number | null;
      fired_ms: number | null;
    }>(
      `SELECT v.id, v.document->>'status' AS status,
              v.document->>'scheduledFor' AS scheduled_for,
              v.document->>'startedAt' AS started_at,
              v.document->>'completedAt' AS completed_at,
              (extract(epoch FROM j.due_at) * 1000)::float8 AS due_ms,
              (extract(epoch FROM j.fired_at) * 1000)::float8 AS fired_ms
         FROM invocation.invocation_views v
         LEFT JOIN scheduler.scheduled_jobs j ON j.name = v.document->>'schedulerJobName'
        WHERE v.id = ANY($1::uuid[])`,
      [invocationIds],
    );
    return rows.map((row) => ({
      invocationId: row.id,
      status: row.status,
      scheduledFor: epochMs(row.scheduled_for),
      startedAt: epochMs(row.started_at),
      completedAt: epochMs(row.completed_at),
      jobDueAt: row.due_ms ?? Number.NaN,
      jobFiredAt: row.fired_ms ?? Number.NaN,
    }));
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

function epochMs(iso: string | null): number {
  return iso === null ? Number.NaN : Date.parse(iso);
}
