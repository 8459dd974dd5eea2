/**
 * The schedules, their projects and their fires in SQL (tables: migration
 * 1763700000210-create-schedules). Every function runs in the caller's transaction.
 *
 * Row locks carry two guarantees. A firing pass claims schedule rows `FOR UPDATE SKIP LOCKED`
 * and holds them until the runs it starts are recorded, so a schedule is fired by one replica at
 * a time. A publish locks the same rows (plain `FOR UPDATE`, it waits), so it is answered only
 * after every fire of the older form has been recorded, and every later fire reads the new form
 * (DESIGN.md section 8).
 */
import type { EntityManager } from 'typeorm';
import type { ScheduleDefinition } from '@runline/engine';
import { returningRows } from '@runline/db';
import { scheduleKey, type FireKind } from './schedule-fire-decisions.js';
import type { PublishPlan } from './schedule-publish-plan.js';

/** A schedule row as read back. */
export interface ScheduleRow {
  projectId: string;
  scheduleId: string;
  orgId: string;
  position: number;
  definition: ScheduleDefinition;
  fingerprint: string;
  anchorAt: Date;
  publishedVersion: number;
  configVersion: number;
  paused: boolean;
  nextFireAt: Date | null;
  dueAt: Date | null;
  skippedCount: number;
  bufferedFireAt: Date | null;
  lastFireAt: Date | null;
  lastInvocationId: string | null;
  lastStatus: string | null;
}

interface RawScheduleRow {
  project_id: string;
  schedule_id: string;
  org_id: string;
  position: number;
  definition: ScheduleDefinition;
  fingerprint: string;
  anchor_at: Date;
  published_version: number;
  config_version: string | number;
  paused: boolean;
  next_fire_at: Date | null;
  due_at: Date | null;
  skipped_count: string | number;
  buffered_fire_at: Date | null;
  last_fire_at: Date | null;
  last_invocation_id: string | null;
  last_status: string | null;
}

const SCHEDULE_COLUMNS =
  'project_id, schedule_id, org_id, position, definition, fingerprint, anchor_at, published_version, config_version, paused, next_fire_at, due_at, skipped_count, buffered_fire_at, last_fire_at, last_invocation_id, last_status';

function scheduleOf(row: RawScheduleRow): ScheduleRow {
  return {
    projectId: row.project_id,
    scheduleId: row.schedule_id,
    orgId: row.org_id,
    position: row.position,
    definition: row.definition,
    fingerprint: row.fingerprint,
    anchorAt: row.anchor_at,
    publishedVersion: row.published_version,
    configVersion: Number(row.config_version),
    paused: row.paused,
    nextFireAt: row.next_fire_at,
    dueAt: row.due_at,
    skippedCount: Number(row.skipped_count),
    bufferedFireAt: row.buffered_fire_at,
    lastFireAt: row.last_fire_at,
    lastInvocationId: row.last_invocation_id,
    lastStatus: row.last_status,
  };
}

/** The latest publish applied to a project, locked until the transaction ends. */
export interface ProjectPublishState {
  publishedVersion: number;
  configVersion: number;
  deleted: boolean;
}

/** Locks the project's row (made on first sight), so publishes and deletions of one project apply one at a time. */
export async function lockProject(manager: EntityManager, projectId: string, orgId: string, at: Date): Promise<ProjectPublishState> {
  await manager.query(
    `INSERT INTO schedule_projects (project_id, org_id, updated_at) VALUES ($1, $2, $3) ON CONFLICT (project_id) DO NOTHING`,
    [projectId, orgId, at],
  );
  const [row] = returningRows<{ published_version: number; config_version: string; deleted: boolean }>(
    await manager.query(`SELECT published_version, config_version, deleted FROM schedule_projects WHERE project_id = $1 FOR UPDATE`, [projectId]),
  );
  if (!row) throw new Error(`schedule_projects row of ${projectId} vanished`);
  return { publishedVersion: row.published_version, configVersion: Number(row.config_version), deleted: row.deleted };
}

/** The project's schedules, locked: waits for a firing pass that holds one of them (see the file's comment). */
export async function lockProjectSchedules(manager: EntityManager, projectId: string): Promise<Array<{ scheduleId: string; fingerprint: string }>> {
  const rows = returningRows<{ schedule_id: string; fingerprint: string }>(
    await manager.query(`SELECT schedule_id, fingerprint FROM schedules WHERE project_id = $1 ORDER BY schedule_id FOR UPDATE`, [projectId]),
  );
  return rows.map((row) => ({ scheduleId: row.schedule_id, fingerprint: row.fingerprint }));
}

/** Writes a publish's plan: removed schedules and the waiting fires of removed and changed ones go, the rest is upserted. */
export async function applyPublishPlan(
  manager: EntityManager,
  project: { projectId: string; orgId: string; publishedVersion: number; configVersion: number },
  plan: PublishPlan,
  at: Date,
): Promise<void> {
  const { projectId } = project;
  const gone = [...plan.removed, ...plan.changed];
  if (gone.length > 0) {
    await manager.query(`DELETE FROM schedule_fires WHERE project_id = $1 AND schedule_id = ANY($2::text[]) AND status = 'PENDING'`, [projectId, gone]);
  }
  if (plan.removed.length > 0) {
    await manager.query(`DELETE FROM schedules WHERE project_id = $1 AND schedule_id = ANY($2::text[])`, [projectId, plan.removed]);
  }
  const unchanged = plan.upserts.filter((entry) => entry.unchanged);
  const fresh = plan.upserts.filter((entry) => !entry.unchanged);
  // One statement each, whatever the number of schedules: a publish waits for this.
  if (unchanged.length > 0) {
    await manager.query(
      `UPDATE schedules s SET position = u.position, definition = u.definition, published_version = $3, config_version = $4, updated_at = $5
         FROM unnest($2::text[], $6::int[], $7::jsonb[]) AS u(schedule_id, position, definition)
        WHERE s.project_id = $1 AND s.schedule_id = u.schedule_id`,
      [
        projectId,
        unchanged.map((entry) => entry.scheduleId),
        project.publishedVersion,
        project.configVersion,
        at,
        unchanged.map((entry) => entry.position),
        unchanged.map((entry) => JSON.stringify(entry.definition)),
      ],
    );
  }
  if (fresh.length > 0) {
    // New or changed: starts afresh from the publish. Pause, the skip count and the latest fire
    // (overlap's previous run) are the schedule's state and stay.
    await manager.query(
      `INSERT INTO schedules (project_id, schedule_id, org_id, position, definition, fingerprint, anchor_at, published_version, config_version,
                              next_fire_at, due_at, created_at, updated_at)
       SELECT $1, u.schedule_id, $2, u.position, u.definition, u.fingerprint, u.anchor_at, $3, $4, u.next_fire_at, u.due_at, $5, $5
         FROM unnest($6::text[], $7::int[], $8::jsonb[], $9::text[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[])
           AS u(schedule_id, position, definition, fingerprint, anchor_at, next_fire_at, due_at)
       ON CONFLICT (project_id, schedule_id) DO UPDATE SET
         position = EXCLUDED.position, definition = EXCLUDED.definition, fingerprint = EXCLUDED.fingerprint,
         anchor_at = EXCLUDED.anchor_at, published_version = EXCLUDED.published_version, config_version = EXCLUDED.config_version,
         next_fire_at = EXCLUDED.next_fire_at, due_at = EXCLUDED.due_at, buffered_fire_at = NULL, updated_at = EXCLUDED.updated_at`,
      [
        projectId,
        project.orgId,
        project.publishedVersion,
        project.configVersion,
        at,
        fresh.map((entry) => entry.scheduleId),
        fresh.map((entry) => entry.position),
        fresh.map((entry) => JSON.stringify(entry.definition)),
        fresh.map((entry) => entry.fingerprint),
        fresh.map((entry) => entry.anchorAt),
        fresh.map((entry) => entry.nextFireAt),
        fresh.map((entry) => entry.dueAt),
      ],
    );
  }
  await manager.query(`UPDATE schedule_projects SET published_version = $2, config_version = GREATEST(config_version, $3), updated_at = $4 WHERE project_id = $1`, [
    projectId,
    project.publishedVersion,
    project.configVersion,
    at,
  ]);
}

/** Raises the configuration version the project's starts carry (a change that is not a publish). */
export async function raiseConfigVersion(manager: EntityManager, projectId: string, configVersion: number, at: Date): Promise<void> {
  await manager.query(`UPDATE schedule_projects SET config_version = GREATEST(config_version, $2), updated_at = $3 WHERE project_id = $1`, [projectId, configVersion, at]);
  await manager.query(`UPDATE schedules SET config_version = GREATEST(config_version, $2) WHERE project_id = $1 AND config_version < $2`, [projectId, configVersion]);
}

/** The project is deleted, for good: its schedules and waiting fires go. */
export async function deleteProjectSchedules(manager: EntityManager, projectId: string, at: Date): Promise<void> {
  await manager.query(`UPDATE schedule_projects SET deleted = true, updated_at = $2 WHERE project_id = $1`, [projectId, at]);
  await manager.query(`DELETE FROM schedule_fires WHERE project_id = $1 AND status = 'PENDING'`, [projectId]);
  await manager.query(`DELETE FROM schedules WHERE project_id = $1`, [projectId]);
}

/**
 * Claims up to `limit` schedules due by `horizon`, earliest first; rows another transaction holds
 * (another replica's pass, a publish, a console change) are skipped. Held until the caller's
 * transaction ends.
 */
export async function claimDueSchedules(manager: EntityManager, horizon: Date, limit: number): Promise<ScheduleRow[]> {
  const rows = returningRows<RawScheduleRow>(
    await manager.query(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE due_at <= $1
        ORDER BY due_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED`,
      [horizon, limit],
    ),
  );
  return rows.map(scheduleOf);
}

/** A waiting fire (backfill, released buffer) claimed with its schedule. */
export interface PendingFire {
  schedule: ScheduleRow;
  scheduledTime: Date;
  dueAt: Date;
  kind: FireKind;
  /** When the fire was recorded: how long its start has been tried (a deferred fire's retries end SCHEDULER_FIRE_RETRY_FOR_MS after it). */
  recordedAt: Date;
}

/**
 * PENDING fires of one schedule a batch claims at most. Its fires start one after the other
 * while the batch holds the schedule's row, and a publish of the project waits for that row:
 * a 1,000-fire backfill claimed whole held it for seconds (a publish meanwhile could run into
 * its deadline, 503). The next batch takes the next ones, oldest first.
 */
export const PENDING_FIRES_PER_SCHEDULE_PER_BATCH = 20;

/**
 * Claims up to `limit` PENDING fires due by `horizon`, oldest first, at most
 * PENDING_FIRES_PER_SCHEDULE_PER_BATCH of one schedule, each with its schedule row (locked).
 *
 * A schedule's waiting fires start strictly in order (a backfill's oldest first, DESIGN section
 * 12) because the schedule's row is their lock: a claim takes the row (`SKIP LOCKED`: a schedule
 * that another batch, a publish or a backfill holds is left whole), and only then, in a
 * statement of its own that sees every change committed before the lock was granted, the
 * schedule's first waiting fires. Everything that writes a schedule's waiting fires holds its row
 * (a backfill, run-now, a publish, a project's deletion, the batch that starts them), so the
 * fires need no lock of their own.
 *
 * One statement that joined the fires to their schedule and locked both `SKIP LOCKED` broke the
 * order: PostgreSQL keeps the lock on a fire it took before finding the schedule's row held (by
 * a publish, another replica's claim), so that claim kept fires it did not return, and the
 * next claim skipped them and started later fires before them.
 */
export async function claimPendingFires(manager: EntityManager, horizon: Date, limit: number): Promise<PendingFire[]> {
  const schedules = await claimSchedulesWithDueFires(manager, horizon, limit);
  if (schedules.length === 0) return [];
  const byKey = new Map(schedules.map((schedule) => [scheduleKey(schedule.projectId, schedule.scheduleId), schedule]));
  const rows = returningRows<{ project_id: string; schedule_id: string; scheduled_time: Date; due_at: Date; kind: FireKind; created_at: Date }>(
    await manager.query(
      `SELECT project_id, schedule_id, scheduled_time, due_at, kind, created_at FROM (
         SELECT project_id, schedule_id, scheduled_time, due_at, kind, created_at,
                row_number() OVER (PARTITION BY project_id, schedule_id ORDER BY due_at, scheduled_time) AS place
           FROM schedule_fires
          WHERE status = 'PENDING' AND due_at <= $1
            AND (project_id, schedule_id) IN (SELECT * FROM unnest($2::uuid[], $3::text[]))) due
        WHERE place <= $4
        ORDER BY due_at, scheduled_time
        LIMIT $5`,
      [horizon, schedules.map((schedule) => schedule.projectId), schedules.map((schedule) => schedule.scheduleId), PENDING_FIRES_PER_SCHEDULE_PER_BATCH, limit],
    ),
  );
  return rows.map((row) => ({
    schedule: byKey.get(scheduleKey(row.project_id, row.schedule_id))!,
    scheduledTime: row.scheduled_time,
    dueAt: row.due_at,
    kind: row.kind,
    recordedAt: row.created_at,
  }));
}

/**
 * Fires whose start was not confirmed (the invocation service did not answer in time, or said it
 * was unavailable) wait again: PENDING, due at `dueAt` plus their place in `fires` in
 * milliseconds (fire order, as a backfill's), to be sent again with the same idempotency key.
 */
export async function deferFires(manager: EntityManager, fires: ReadonlyArray<{ projectId: string; scheduleId: string; scheduledTime: Date }>, dueAt: Date): Promise<void> {
  if (fires.length === 0) return;
  await manager.query(
    `UPDATE schedule_fires f SET status = 'PENDING', due_at = u.due_at
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS u(project_id, schedule_id, scheduled_time, due_at)
      WHERE f.project_id = u.project_id AND f.schedule_id = u.schedule_id AND f.scheduled_time = u.scheduled_time`,
    [
      fires.map((fire) => fire.projectId),
      fires.map((fire) => fire.scheduleId),
      fires.map((fire) => fire.scheduledTime),
      fires.map((_, index) => new Date(dueAt.getTime() + index)),
    ],
  );
}

/**
 * Locks the schedules of the first `limit` waiting fires due by `horizon` (at most
 * PENDING_FIRES_PER_SCHEDULE_PER_BATCH counted of one schedule), skipping those another
 * transaction holds. Locks nothing else.
 */
async function claimSchedulesWithDueFires(manager: EntityManager, horizon: Date, limit: number): Promise<ScheduleRow[]> {
  const rows = returningRows<RawScheduleRow>(
    await manager.query(
      `SELECT ${SCHEDULE_COLUMNS} FROM schedules
        WHERE (project_id, schedule_id) IN (
                SELECT project_id, schedule_id FROM (
                  SELECT project_id, schedule_id, due_at, scheduled_time,
                         row_number() OVER (PARTITION BY project_id, schedule_id ORDER BY due_at, scheduled_time) AS place
                    FROM schedule_fires
                   WHERE status = 'PENDING' AND due_at <= $1) due
                 WHERE place <= $3
                 ORDER BY due_at, scheduled_time
                 LIMIT $2)
        FOR UPDATE OF schedules SKIP LOCKED`,
      [horizon, limit, PENDING_FIRES_PER_SCHEDULE_PER_BATCH],
    ),
  );
  return rows.map(scheduleOf);
}

/** What a firing pass decided for one schedule row. */
export interface ScheduleAdvance {
  projectId: string;
  scheduleId: string;
  nextFireAt: Date | null;
  dueAt: Date | null;
  bufferedFireAt: Date | null;
  skipped: number;
}

export async function advanceSchedule(manager: EntityManager, advance: ScheduleAdvance, at: Date): Promise<void> {
  await manager.query(
    `UPDATE schedules SET next_fire_at = $3, due_at = $4, buffered_fire_at = $5, skipped_count = skipped_count + $6, updated_at = $7
      WHERE project_id = $1 AND schedule_id = $2`,
    [advance.projectId, advance.scheduleId, advance.nextFireAt, advance.dueAt, advance.bufferedFireAt, advance.skipped, at],
  );
}

/** A fire as recorded. */
export interface FireRecord {
  projectId: string;
  scheduleId: string;
  orgId: string;
  scheduledTime: Date;
  kind: FireKind;
  status: 'PENDING' | 'STARTED' | 'SKIPPED' | 'NOT_STARTED';
  dueAt: Date;
}

/**
 * Inserts fires; one whose (project, schedule, nominal time) is known already is not (it has
 * fired, or waits). Returns the keys of those inserted (`fireKeyOf`).
 */
export async function insertFires(manager: EntityManager, fires: readonly FireRecord[], at: Date): Promise<Set<string>> {
  if (fires.length === 0) return new Set();
  const rows = returningRows<{ project_id: string; schedule_id: string; scheduled_time: Date }>(
    await manager.query(
      `INSERT INTO schedule_fires (project_id, schedule_id, scheduled_time, org_id, kind, status, due_at, created_at)
       SELECT u.project_id, u.schedule_id, u.scheduled_time, u.org_id, u.kind, u.status, u.due_at, $8::timestamptz
         FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[])
           AS u(project_id, schedule_id, scheduled_time, org_id, kind, status, due_at)
       ON CONFLICT DO NOTHING
       RETURNING project_id, schedule_id, scheduled_time`,
      [
        fires.map((fire) => fire.projectId),
        fires.map((fire) => fire.scheduleId),
        fires.map((fire) => fire.scheduledTime),
        fires.map((fire) => fire.orgId),
        fires.map((fire) => fire.kind),
        fires.map((fire) => fire.status),
        fires.map((fire) => fire.dueAt),
        at,
      ],
    ),
  );
  return new Set(rows.map((row) => fireKeyOf(row.project_id, row.schedule_id, row.scheduled_time)));
}

export function fireKeyOf(projectId: string, scheduleId: string, scheduledTime: Date): string {
  return `${projectId}/${scheduleId}/${scheduledTime.toISOString()}`;
}

/** How a fire's start ended. */
export interface FireOutcome {
  projectId: string;
  scheduleId: string;
  scheduledTime: Date;
  startedAt: Date;
  /** Null when no run was recorded (`reason` says why). */
  invocationId: string | null;
  runStatus: string | null;
  reason: string | null;
}

/** Records a fire's start; a fire with a run becomes the schedule's latest fire (lastFire, and overlap's previous run). */
export async function recordFireOutcome(manager: EntityManager, outcome: FireOutcome): Promise<void> {
  const status = outcome.invocationId === null ? 'NOT_STARTED' : 'STARTED';
  await manager.query(
    `UPDATE schedule_fires SET status = $4, invocation_id = $5, run_status = $6, reason = $7, started_at = $8
      WHERE project_id = $1 AND schedule_id = $2 AND scheduled_time = $3`,
    [outcome.projectId, outcome.scheduleId, outcome.scheduledTime, status, outcome.invocationId, outcome.runStatus, outcome.reason, outcome.startedAt],
  );
  if (outcome.invocationId === null) return;
  await manager.query(
    `UPDATE schedules SET last_fire_at = $3, last_invocation_id = $4, last_status = $5
      WHERE project_id = $1 AND schedule_id = $2`,
    [outcome.projectId, outcome.scheduleId, outcome.scheduledTime, outcome.invocationId, outcome.runStatus],
  );
}

/** The schedule's latest run's status as asked of the invocation service (overlap). */
export async function setLastStatus(manager: EntityManager, projectId: string, scheduleId: string, invocationId: string, status: string): Promise<void> {
  await manager.query(`UPDATE schedules SET last_status = $4 WHERE project_id = $1 AND schedule_id = $2 AND last_invocation_id = $3`, [projectId, scheduleId, invocationId, status]);
}

/** A fire's run that ended (`status` final), as the invocation service's FireRunEnded says; `at` when the scheduler learnt it. */
export interface EndedFireRun {
  projectId: string;
  scheduleId: string;
  scheduledTime: Date;
  invocationId: string;
  status: string;
  at: Date;
}

/**
 * A fire's run ended: the fire and, when it is the schedule's latest run, the schedule learn
 * it, and a BUFFER_ONE fire waiting behind it becomes due at `at`. Returns the due times that
 * changed, for the local timer.
 */
export async function recordRunEnded(manager: EntityManager, ended: EndedFireRun): Promise<Date[]> {
  await manager.query(
    `UPDATE schedule_fires SET run_status = $5
      WHERE project_id = $1 AND schedule_id = $2 AND scheduled_time = $3 AND invocation_id = $4`,
    [ended.projectId, ended.scheduleId, ended.scheduledTime, ended.invocationId, ended.status],
  );
  const rows = returningRows<{ due_at: Date | null }>(
    await manager.query(
      `UPDATE schedules SET last_status = $4,
              due_at = CASE WHEN buffered_fire_at IS NOT NULL THEN LEAST(COALESCE(due_at, $5), $5) ELSE due_at END
        WHERE project_id = $1 AND schedule_id = $2 AND last_invocation_id = $3
        RETURNING due_at`,
      [ended.projectId, ended.scheduleId, ended.invocationId, ended.status, ended.at],
    ),
  );
  return rows.map((row) => row.due_at).filter((due): due is Date => due !== null);
}

/** The earliest time after `after` at which a schedule or a waiting fire is due, or null. */
export async function nextDueAfter(manager: EntityManager, after: Date): Promise<Date | null> {
  const [row] = returningRows<{ next: Date | null }>(
    await manager.query(
      `SELECT LEAST(
         (SELECT due_at FROM schedules WHERE due_at > $1 ORDER BY due_at LIMIT 1),
         (SELECT due_at FROM schedule_fires WHERE status = 'PENDING' AND due_at > $1 ORDER BY due_at LIMIT 1)) AS next`,
      [after],
    ),
  );
  return row?.next ?? null;
}

/** The project's schedules in definition order (no lock). */
export async function projectSchedules(manager: EntityManager, projectId: string): Promise<ScheduleRow[]> {
  const rows = returningRows<RawScheduleRow>(
    await manager.query(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE project_id = $1 ORDER BY position, schedule_id`, [projectId]),
  );
  return rows.map(scheduleOf);
}

/** One schedule, locked until the transaction ends (waits for a pass firing it), or null. */
export async function lockSchedule(manager: EntityManager, projectId: string, scheduleId: string): Promise<ScheduleRow | null> {
  const [row] = returningRows<RawScheduleRow>(
    await manager.query(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE project_id = $1 AND schedule_id = $2 FOR UPDATE`, [projectId, scheduleId]),
  );
  return row ? scheduleOf(row) : null;
}

/** Pauses or resumes; a resume starts from `nextFireAt` (nothing missed while paused is caught up). */
export async function setPaused(
  manager: EntityManager,
  projectId: string,
  scheduleId: string,
  change: { paused: boolean; nextFireAt: Date | null; dueAt: Date | null },
  at: Date,
): Promise<void> {
  await manager.query(
    `UPDATE schedules SET paused = $3, next_fire_at = $4, due_at = $5, buffered_fire_at = CASE WHEN $3 THEN NULL ELSE buffered_fire_at END, updated_at = $6
      WHERE project_id = $1 AND schedule_id = $2`,
    [projectId, scheduleId, change.paused, change.nextFireAt, change.dueAt, at],
  );
}

/** Deletes up to `limit` fires recorded before `before` that no longer wait; returns how many went. */
export async function pruneFires(manager: EntityManager, before: Date, limit: number): Promise<number> {
  const rows = returningRows<{ scheduled_time: Date }>(
    await manager.query(
      `DELETE FROM schedule_fires
        WHERE (project_id, schedule_id, scheduled_time) IN (
                SELECT project_id, schedule_id, scheduled_time FROM schedule_fires
                 WHERE created_at < $1 AND status <> 'PENDING'
                 ORDER BY created_at
                 LIMIT $2
                 FOR UPDATE SKIP LOCKED)
        RETURNING scheduled_time`,
      [before, limit],
    ),
  );
  return rows.length;
}
