/**
 * What a publish does to a project's schedules (DESIGN.md sections 8 and 12), pure: a schedule
 * whose normalized form is unchanged (same fingerprint) keeps its anchor, its next fire and its
 * state; a new or changed one starts afresh from the publish; one no longer in the definition
 * is removed. Pause is state, not definition: it is kept whatever the publish changes.
 */
import { nextFireTime, normalizeSchedule, scheduleFingerprint, type ScheduleDefinition } from '@runline/engine';
import { dueTimeOf, scheduleKey } from './schedule-fire-decisions.js';

/** A schedule as stored before the publish (what the plan needs of it). */
export interface StoredSchedule {
  scheduleId: string;
  fingerprint: string;
}

/** A schedule as the publish leaves it. */
export interface PublishedSchedule {
  scheduleId: string;
  position: number;
  definition: ScheduleDefinition;
  fingerprint: string;
  /** True: the row keeps its anchor, times, buffered fire and counters (only position and versions change). */
  unchanged: boolean;
  /** For a new or changed schedule: its anchor (the publish time), first fire and due time. */
  anchorAt: Date;
  nextFireAt: Date | null;
  dueAt: Date | null;
}

export interface PublishPlan {
  upserts: PublishedSchedule[];
  /** Ids of schedules no longer published: their rows and waiting fires go. */
  removed: string[];
  /** Ids of changed schedules: their waiting fires (backfill, buffered) belong to the old form and go. */
  changed: string[];
}

/** The automation's `workflow.schedules` from a published definition; none for a chatbot or a definition without them. */
export function rawSchedulesOf(definition: unknown): unknown[] {
  if (!isObject(definition) || !isObject(definition.workflow)) return [];
  const schedules = definition.workflow.schedules;
  return Array.isArray(schedules) ? schedules : [];
}

/**
 * The plan for publishing `rawSchedules` at `publishedAt` over `stored`. A schedule the core
 * cannot normalize (the gateway validated it on save, so only a definition from an older
 * gateway could hold one) is left out, as if not published.
 */
export function planPublish(projectId: string, rawSchedules: readonly unknown[], stored: readonly StoredSchedule[], publishedAt: Date): PublishPlan {
  const before = new Map(stored.map((row) => [row.scheduleId, row.fingerprint]));
  const upserts: PublishedSchedule[] = [];
  const changed: string[] = [];
  rawSchedules.forEach((raw, position) => {
    let definition: ScheduleDefinition;
    try {
      definition = normalizeSchedule(raw);
    } catch {
      return;
    }
    if (upserts.some((entry) => entry.scheduleId === definition.id)) return;
    const fingerprint = scheduleFingerprint(definition);
    const previous = before.get(definition.id);
    const unchanged = previous === fingerprint;
    if (previous !== undefined && !unchanged) changed.push(definition.id);
    const nextFireAt = definition.enabled ? nextFireTime(definition, publishedAt, publishedAt) : null;
    upserts.push({
      scheduleId: definition.id,
      position,
      definition,
      fingerprint,
      unchanged,
      anchorAt: publishedAt,
      nextFireAt,
      dueAt: nextFireAt === null ? null : dueTimeOf(scheduleKey(projectId, definition.id), nextFireAt, definition),
    });
  });
  const kept = new Set(upserts.map((entry) => entry.scheduleId));
  return { upserts, removed: stored.map((row) => row.scheduleId).filter((id) => !kept.has(id)), changed };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
