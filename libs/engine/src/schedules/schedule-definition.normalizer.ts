import { createHash } from 'node:crypto';
import type { JsonValue } from '../run.types.js';
import { SCHEDULE_DEFAULTS, type ScheduleConfig, type ScheduleDefinition } from './schedule-definition.types.js';
import { resolveTimeZone } from './zone-wall-clock.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `15m` → 900000; undefined when it is not a whole number followed by s, m, h or d. */
export function parseEvery(every: string): number | undefined {
  const match = /^([1-9][0-9]{0,9})([smhd])$/.exec(every);
  if (match === null) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** The cron expression with single spaces between its fields. */
export function canonicalCron(cron: string): string {
  return cron.trim().split(/\s+/).join(' ');
}

/**
 * A schedule that passed validation, with every default applied: timezone "UTC", overlap
 * SKIP, catchUp LATEST, catchUpWindowSeconds 3600, jitterSeconds 0, enabled true, payload {}.
 * An `every` schedule's timezone is "UTC" whatever it says (it counts elapsed time).
 */
export function normalizeSchedule(raw: unknown): ScheduleDefinition {
  const config = raw as ScheduleConfig;
  const cron = typeof config.cron === 'string' ? canonicalCron(config.cron) : null;
  const every = cron === null && typeof config.every === 'string' ? config.every : null;
  const timezone = cron === null ? 'UTC' : (resolveTimeZone(config.timezone ?? SCHEDULE_DEFAULTS.timezone) ?? SCHEDULE_DEFAULTS.timezone);
  return {
    id: config.id,
    cron,
    every,
    timezone,
    payload: (config.payload ?? {}) as JsonValue,
    overlap: config.overlap ?? SCHEDULE_DEFAULTS.overlap,
    catchUp: config.catchUp ?? SCHEDULE_DEFAULTS.catchUp,
    catchUpWindowSeconds: config.catchUpWindowSeconds ?? SCHEDULE_DEFAULTS.catchUpWindowSeconds,
    jitterSeconds: config.jitterSeconds ?? SCHEDULE_DEFAULTS.jitterSeconds,
    startAt: toUtcIso(config.startAt),
    endAt: toUtcIso(config.endAt),
    enabled: config.enabled ?? SCHEDULE_DEFAULTS.enabled,
  };
}

function toUtcIso(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * A hash of what decides a schedule's fire times: id, cron, interval (in ms, so "60m" and
 * "1h" are the same), time zone, startAt, endAt and enabled. Payload, policies and jitter
 * are left out: changing them keeps the schedule's times. A re-enabled schedule starts afresh,
 * so it does not catch up the fires of the time it was disabled.
 */
export function scheduleFingerprint(schedule: ScheduleDefinition): string {
  const decisive = [
    'schedule-v1',
    schedule.id,
    schedule.cron,
    schedule.every === null ? null : (parseEvery(schedule.every) ?? schedule.every),
    schedule.cron === null ? 'UTC' : schedule.timezone,
    schedule.startAt,
    schedule.endAt,
    schedule.enabled,
  ];
  return createHash('sha256').update(JSON.stringify(decisive)).digest('hex').slice(0, 32);
}

/**
 * How late a fire starts on purpose, in [0, jitterSeconds × 1000) ms: the same for the same
 * schedule key and nominal time on every replica and after every restart, so a fire's start
 * time is never decided twice, and spread evenly so fires due together do not start together.
 */
export function jitterMs(scheduleKey: string, nominal: Date, jitterSeconds: number): number {
  if (!(jitterSeconds > 0)) return 0;
  const digest = createHash('sha256').update(`${scheduleKey}\n${nominal.toISOString()}`).digest();
  // 48 bits, read as a fraction of one: exact in a double and uniform enough for spreading.
  const fraction = digest.readUIntBE(0, 6) / 2 ** 48;
  return Math.floor(fraction * jitterSeconds * 1000);
}

/** The normalized schedules of a validated definition; [] when it has none (every chatbot). */
export function schedulesOf(definition: unknown): ScheduleDefinition[] {
  const workflow = (definition as { workflow?: { schedules?: unknown } } | null)?.workflow;
  const schedules = workflow?.schedules;
  return Array.isArray(schedules) ? schedules.map(normalizeSchedule) : [];
}
