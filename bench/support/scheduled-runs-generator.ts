import pg from 'pg';

/** What generating the far runs in SQL took, for the report. */
export interface GeneratedRuns {
  count: number;
  /** Seconds per step: the inserts per table, then VACUUM ANALYZE. */
  steps: Array<{ what: string; seconds: number }>;
}

/** Rows per INSERT … SELECT: large enough to be quick, small enough to report progress. */
const CHUNK = 250_000;

/**
 * Makes `count` more scheduled runs exactly like `templateId` (a far run accepted through the
 * API, whose scheduler job is recorded), due at `dueAt(i)`: the rows the invocation service
 * and the scheduler store for one (`invocation.invocations`, its `InvocationScheduled` event,
 * its read-model document, and `scheduler.scheduled_jobs`), each with a fresh invocation id,
 * its own job name (`run-<id>`) and its own due time wherever the service writes one. Only
 * the sealed plan is the template's own (it cannot be re-sealed here; its runAt is the
 * template's, which matters only if such a run started, and none comes due during the
 * benchmark). Not made: the scheduler's inbox rows of the ScheduleJob commands (the claim never
 * reads them).
 *
 * Then VACUUM ANALYZE on the four tables, as autovacuum would do after so many inserts: done
 * here so that it does not run during the measured window instead.
 *
 * Accepting 1,000,000 runs through the API takes over an hour on this machine (about 200 to
 * 500 a second); this takes a few minutes.
 */
export async function generateScheduledRuns(
  databaseUrl: string,
  templateId: string,
  count: number,
  dueAt: (index: number) => number,
  progress: (line: string) => void,
): Promise<GeneratedRuns> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const steps: GeneratedRuns['steps'] = [];
  const timed = async (what: string, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    steps.push({ what, seconds });
    progress(`${what}: ${seconds.toFixed(1)} s`);
  };
  try {
    await client.query(`SET synchronous_commit = off`);
    await client.query(`CREATE TEMP TABLE generated_runs (i int PRIMARY KEY, id uuid NOT NULL, due timestamptz NOT NULL, iso text NOT NULL)`);
    await timed(`${count} ids and due times`, async () => {
      // Due times from the client's list, sent as one array: the benchmark's baseline arms the same ones.
      for (let from = 0; from < count; from += CHUNK) {
        const dues = Array.from({ length: Math.min(CHUNK, count - from) }, (_, k) => dueAt(from + k));
        await client.query(
          `INSERT INTO generated_runs (i, id, due, iso)
           SELECT $1::int + k - 1, gen_random_uuid(), due, to_char(due AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             FROM unnest($2::bigint[]) WITH ORDINALITY AS d(ms, k),
                  LATERAL (SELECT timestamptz 'epoch' + ms * interval '1 millisecond' AS due) AS t`,
          [from, dues],
        );
      }
    });
    const inChunks = (sql: string) => async () => {
      for (let from = 0; from < count; from += CHUNK) await client.query(sql, [templateId, from, from + CHUNK]);
    };
    const chunk = `g.i >= $2 AND g.i < $3`;
    await timed(
      'invocation.invocations',
      inChunks(`INSERT INTO invocation.invocations (id, org_id, project_id, target_type, mode, status, attempt, max_attempts, run_after,
                  lease_owner, lease_expires_at, sequence, sealed_plan, sealed_resume_state, created_at, updated_at, waiting_job)
                SELECT g.id, t.org_id, t.project_id, t.target_type, t.mode, t.status, t.attempt, t.max_attempts, t.run_after,
                       t.lease_owner, t.lease_expires_at, t.sequence, t.sealed_plan, t.sealed_resume_state, t.created_at, t.updated_at, 'run-' || g.id
                  FROM invocation.invocations t, generated_runs g WHERE t.id = $1 AND ${chunk}`),
    );
    await timed(
      'invocation.invocation_events',
      inChunks(`INSERT INTO invocation.invocation_events (invocation_id, sequence, id, type, occurred_at, data)
                SELECT g.id, e.sequence, gen_random_uuid(), e.type, e.occurred_at,
                       jsonb_set(jsonb_set(jsonb_set(e.data, '{scheduledFor}', to_jsonb(g.iso)), '{schedulerJobName}', to_jsonb('run-' || g.id)),
                                 '{request,requestPayload,runAt}', to_jsonb(g.iso))
                  FROM invocation.invocation_events e, generated_runs g WHERE e.invocation_id = $1 AND ${chunk}`),
    );
    await timed(
      'invocation.invocation_views',
      inChunks(`INSERT INTO invocation.invocation_views (id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
                SELECT g.id, v.org_id, v.project_id, v.started_by_token_id, v.target_type,
                       v.document || jsonb_build_object('invocationId', g.id, 'scheduledFor', g.iso, 'schedulerJobName', 'run-' || g.id,
                                       'requestPayload', jsonb_build_object('runAt', g.iso, 'payload', jsonb_build_object('n', g.i))),
                       v.sequence, v.created_at, v.updated_at
                  FROM invocation.invocation_views v, generated_runs g WHERE v.id = $1 AND ${chunk}`),
    );
    await timed(
      'scheduler.scheduled_jobs',
      inChunks(`INSERT INTO scheduler.scheduled_jobs (name, kind, invocation_id, org_id, project_id, due_at, status, correlation_id, causation_id,
                  traceparent, created_at, updated_at)
                SELECT 'run-' || g.id, j.kind, g.id, j.org_id, j.project_id, g.due, j.status, j.correlation_id, j.causation_id,
                       j.traceparent, j.created_at, j.updated_at
                  FROM scheduler.scheduled_jobs j, generated_runs g WHERE j.invocation_id = $1 AND ${chunk}`),
    );
    await timed('VACUUM ANALYZE of the four tables', async () => {
      for (const table of ['invocation.invocations', 'invocation.invocation_events', 'invocation.invocation_views', 'scheduler.scheduled_jobs']) {
        await client.query(`VACUUM ANALYZE ${table}`);
      }
    });
    return { count, steps };
  } finally {
    await client.end();
  }
}
