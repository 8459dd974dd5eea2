import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the console's logs and invocation health read (queries/invocation-logs.repository.ts):
 *
 * - STORED generated columns copy from the document what those queries filter and aggregate
 *   on, so they never detoast the (possibly large) document. PostgreSQL recomputes them on each
 *   write of the row. Every expression is immutable and cannot throw on any document (a
 *   missing or non-numeric durationMs gives NULL), because an error here would fail the run's
 *   transition.
 * - Keyset indexes on (org_id | project_id, created_at DESC, id DESC): logs pages and metrics
 *   windows are ranges of them. They hold only columns a run never changes.
 * - One index holds a column a transition changes: (project_id, status, created_at DESC, id
 *   DESC), for the logs of a project filtered by status. Without it a rare status reads every
 *   run of the project (bench:dashboard on 1,000,000 runs: p99 187 ms against a goal of 20). The
 *   price: a transition that changes the status is no longer a HOT update (every index of the
 *   row gets an entry); one that keeps it (a callback attempt) still is. mode, trigger_source,
 *   duration_ms and callback_state are not indexed (bench/README.md "Dashboard").
 * - idempotency_keys(key): `q` finds a run by its idempotency key without naming the project,
 *   target and mode the primary key starts with. The table is insert-only, so this costs one
 *   index entry per keyed run and no HOT update.
 *
 * Adding stored columns rewrites invocation_views under an exclusive lock: on a large table
 * run it in a maintenance window. Never edit this class once it has landed: add a new
 * migration instead.
 */
export class IndexRunLogs1763700000175 implements MigrationInterface {
  name = 'IndexRunLogs1763700000175';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE invocation_views
        ADD COLUMN status text GENERATED ALWAYS AS (document->>'status') STORED,
        ADD COLUMN mode text GENERATED ALWAYS AS (document->>'mode') STORED,
        ADD COLUMN trigger_source text GENERATED ALWAYS AS (document->>'triggerSource') STORED,
        ADD COLUMN duration_ms bigint GENERATED ALWAYS AS (
          CASE WHEN jsonb_typeof(document->'durationMs') = 'number' THEN round((document->>'durationMs')::numeric)::bigint END
        ) STORED,
        -- DELIVERED: an attempt was acknowledged. FAILED: the delivery ended (an attempt marked
        -- final) without an acknowledgement. NULL: no callback, or still being retried.
        ADD COLUMN callback_state text GENERATED ALWAYS AS (
          CASE
            WHEN document->'callbackAttempts' @> '[{"outcome": "ACKNOWLEDGED"}]' THEN 'DELIVERED'
            WHEN document->'callbackAttempts' @> '[{"final": true}]' THEN 'FAILED'
          END
        ) STORED`);
    await queryRunner.query(`DROP INDEX invocation_views_org_idx`);
    await queryRunner.query(`CREATE INDEX invocation_views_org_keyset_idx ON invocation_views (org_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX invocation_views_project_keyset_idx ON invocation_views (project_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX invocation_views_project_status_idx ON invocation_views (project_id, status, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX idempotency_keys_key_idx ON idempotency_keys (key)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX idempotency_keys_key_idx`);
    await queryRunner.query(`DROP INDEX invocation_views_project_status_idx`);
    await queryRunner.query(`DROP INDEX invocation_views_project_keyset_idx`);
    await queryRunner.query(`DROP INDEX invocation_views_org_keyset_idx`);
    await queryRunner.query(`CREATE INDEX invocation_views_org_idx ON invocation_views (org_id, created_at DESC)`);
    await queryRunner.query(`
      ALTER TABLE invocation_views
        DROP COLUMN callback_state, DROP COLUMN duration_ms, DROP COLUMN trigger_source, DROP COLUMN mode, DROP COLUMN status`);
  }
}
