import { InvalidDefinitionError, type DefinitionError } from '../definition.errors.js';
import { canonicalCron, parseEvery } from './schedule-definition.normalizer.js';
import {
  CATCH_UP_POLICIES,
  OVERLAP_POLICIES,
  SCHEDULE_ID_PATTERN,
  SCHEDULE_LIMITS as L,
  type ScheduleConfig,
} from './schedule-definition.types.js';
import { compileCron } from './schedule-fire-times.js';
import { resolveTimeZone } from './zone-wall-clock.js';

/** The fields a schedule may have, in the order messages list them. */
export const SCHEDULE_FIELDS: readonly (keyof ScheduleConfig)[] = [
  'id',
  'cron',
  'every',
  'timezone',
  'payload',
  'overlap',
  'catchUp',
  'catchUpWindowSeconds',
  'jitterSeconds',
  'startAt',
  'endAt',
  'enabled',
];

/** ISO 8601 date-time with `Z` or an offset; seconds and fractions optional. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Where a document may hold schedules that are not allowed there, by project type. */
const MISPLACED_IN_AUTOMATION = [['schedules'], ['workflow', 'trigger', 'schedules']] as const;
const MISPLACED_IN_CHATBOT = [['schedules'], ['bot', 'schedules'], ['flow', 'schedules'], ['flow', 'trigger', 'schedules'], ['workflow', 'schedules']] as const;

/**
 * Schedules in a place they are not allowed: anywhere in a chatbot definition, and outside
 * `workflow.schedules` in an automation's. Runs before the structure check, so these get a
 * message of their own rather than "unknown field".
 */
export function checkSchedulePlacement(isChatbot: boolean, document: Readonly<Record<string, unknown>>): DefinitionError[] {
  const errors: DefinitionError[] = [];
  for (const path of isChatbot ? MISPLACED_IN_CHATBOT : MISPLACED_IN_AUTOMATION) {
    if (valueAt(document, path) === undefined) continue;
    const field = path.join('.');
    const message = isChatbot
      ? `a CHATBOT definition cannot have schedules ("${field}"); schedules are for automations, in workflow.schedules`
      : `schedules belong in workflow.schedules, not in "${field}"`;
    errors.push({ path: `/${path.join('/')}`, message });
  }
  return errors;
}

function valueAt(document: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = document;
  for (const key of path) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/**
 * Checks `workflow.schedules` of an automation document whose structure passed; every message
 * names the schedule: `Schedule daily-report: …` (or `Schedule #2: …` before it has a good id).
 */
export function checkSchedules(schedules: unknown): DefinitionError[] {
  if (schedules === undefined) return [];
  const path = '/workflow/schedules';
  if (!Array.isArray(schedules)) return [{ path, graph: 'workflow', message: 'workflow.schedules must be an array of schedules' }];
  if (schedules.length > L.maxSchedules) {
    const message = `workflow.schedules has ${schedules.length} schedules; at most ${L.maxSchedules} are allowed`;
    return [{ path, graph: 'workflow', message }];
  }
  const errors: DefinitionError[] = [];
  const firstIndexOfId = new Map<string, number>();
  schedules.forEach((schedule: unknown, index) => {
    const problems = scheduleProblems(schedule);
    const id = isRecord(schedule) && typeof schedule['id'] === 'string' && new RegExp(SCHEDULE_ID_PATTERN).test(schedule['id']) ? schedule['id'] : undefined;
    if (id !== undefined) {
      const first = firstIndexOfId.get(id);
      if (first === undefined) firstIndexOfId.set(id, index);
      else problems.unshift(`id "${id}" is used by schedule #${first + 1} too; ids must be unique`);
    }
    const name = id ?? `#${index + 1}`;
    for (const problem of problems) errors.push({ path: `${path}/${index}`, graph: 'workflow', message: `Schedule ${name}: ${problem}` });
  });
  return errors;
}

/** The problems of one schedule, as sentences without the `Schedule <id>: ` prefix. */
function scheduleProblems(schedule: unknown): string[] {
  if (!isRecord(schedule)) return ['a schedule must be an object'];
  const problems: string[] = [];
  for (const key of Object.keys(schedule)) {
    if (!(SCHEDULE_FIELDS as readonly string[]).includes(key)) problems.push(`unknown field "${key}" (a schedule has ${SCHEDULE_FIELDS.join(', ')})`);
  }
  problems.push(...idProblems(schedule['id']));
  problems.push(...timingProblems(schedule));
  problems.push(...policyProblems(schedule));
  return problems;
}

function idProblems(id: unknown): string[] {
  if (id === undefined) return ['id is required'];
  if (typeof id !== 'string') return ['id must be a string'];
  if (!new RegExp(SCHEDULE_ID_PATTERN).test(id)) return [`id ${JSON.stringify(id)} must be 1 to 64 characters of a-z, 0-9 and "-"`];
  return [];
}

/** cron or every, time zone, startAt and endAt, and jitter against the interval. */
function timingProblems(schedule: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const cron = schedule['cron'] ?? undefined;
  const every = schedule['every'] ?? undefined;
  if (cron !== undefined && every !== undefined) problems.push('set either cron or every, not both');
  else if (cron === undefined && every === undefined) problems.push('set cron (e.g. "0 9 * * 1-5") or every (e.g. "15m")');
  if (cron !== undefined) problems.push(...cronProblems(cron));
  const intervalMs = typeof every === 'string' ? parseEvery(every) : undefined;
  if (every !== undefined) problems.push(...everyProblems(every, intervalMs));

  const timezone = schedule['timezone'];
  if (timezone !== undefined) {
    if (typeof timezone !== 'string') problems.push('timezone must be a string (an IANA name such as "Europe/Berlin")');
    else if (resolveTimeZone(timezone) === undefined) problems.push(`timezone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. "Europe/Berlin", "UTC")`);
  }

  const startMs = dateTimeProblem('startAt', schedule['startAt'], problems);
  const endMs = dateTimeProblem('endAt', schedule['endAt'], problems);
  if (startMs !== undefined && endMs !== undefined && startMs >= endMs) problems.push('startAt must be before endAt');

  const jitter = schedule['jitterSeconds'];
  if (jitter !== undefined) {
    if (!isIntegerIn(jitter, 0, L.maxJitterSeconds)) problems.push(`jitterSeconds must be an integer from 0 to ${L.maxJitterSeconds}`);
    else if (intervalMs !== undefined && jitter * 1000 >= intervalMs) {
      problems.push(`jitterSeconds (${jitter}) must be shorter than the interval (every "${String(every)}")`);
    }
  }
  return problems;
}

function cronProblems(cron: unknown): string[] {
  if (typeof cron !== 'string') return ['cron must be a string'];
  const fields = canonicalCron(cron).split(' ').filter((field) => field !== '');
  if (fields.length !== 5 && fields.length !== 6) {
    return [`cron ${JSON.stringify(cron)} must have 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; it has ${fields.length}`];
  }
  // Croner reads "?" as the time the pattern is parsed, so the schedule would depend on when it was saved.
  if (cron.includes('?')) return [`cron ${JSON.stringify(cron)} uses "?", which is not supported (use "*")`];
  let compiled;
  try {
    compiled = compileCron(canonicalCron(cron));
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, '');
    return [`cron ${JSON.stringify(cron)} is not valid: ${reason}`];
  }
  if (compiled.nextRun(new Date(0)) === null) return [`cron ${JSON.stringify(cron)} never matches a date`];
  return [];
}

function everyProblems(every: unknown, intervalMs: number | undefined): string[] {
  if (typeof every !== 'string') return ['every must be a string such as "30s", "15m", "2h" or "1d"'];
  if (intervalMs === undefined) return [`every ${JSON.stringify(every)} must be a whole number followed by s, m, h or d (e.g. "30s", "15m", "2h", "1d")`];
  if (intervalMs < L.minEveryMs || intervalMs > L.maxEveryMs) return [`every ${JSON.stringify(every)} is out of range (from 1s to 31d)`];
  return [];
}

/** Adds the problem of an ISO date-time field to `problems`; answers its instant when valid. */
function dateTimeProblem(field: string, value: unknown, problems: string[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  const match = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (match === null || Number.isNaN(ms) || !isRealDate(match)) {
    problems.push(`${field} must be an ISO 8601 date-time with Z or an offset, e.g. "2030-01-01T09:00:00Z"`);
    return undefined;
  }
  return ms;
}

/** Date.parse rolls 30 February over to March; the written date must exist. */
function isRealDate(match: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
}

function policyProblems(schedule: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const payload = schedule['payload'];
  if (payload !== undefined && !isRecord(payload)) problems.push('payload must be a JSON object');
  const overlap = schedule['overlap'];
  if (overlap !== undefined && !(OVERLAP_POLICIES as readonly unknown[]).includes(overlap)) {
    problems.push(`overlap must be one of ${OVERLAP_POLICIES.join(', ')} (got ${JSON.stringify(overlap)})`);
  }
  const catchUp = schedule['catchUp'];
  if (catchUp !== undefined && !(CATCH_UP_POLICIES as readonly unknown[]).includes(catchUp)) {
    problems.push(`catchUp must be one of ${CATCH_UP_POLICIES.join(', ')} (got ${JSON.stringify(catchUp)})`);
  }
  const window = schedule['catchUpWindowSeconds'];
  if (window !== undefined && !isIntegerIn(window, 1, L.maxCatchUpWindowSeconds)) {
    problems.push(`catchUpWindowSeconds must be an integer from 1 to ${L.maxCatchUpWindowSeconds} (7 days)`);
  }
  const enabled = schedule['enabled'];
  if (enabled !== undefined && typeof enabled !== 'boolean') problems.push('enabled must be true or false');
  return problems;
}

/**
 * Throws InvalidDefinitionError when a definition's schedules are wrong: misplaced (any in a
 * chatbot definition) or invalid; each error's message is `Schedule <id>: …`. A definition
 * with a `bot` graph is a chatbot's. `validateDefinition` makes the same checks.
 */
export function validateSchedules(definition: unknown): void {
  if (!isRecord(definition)) return;
  const placement = checkSchedulePlacement(definition['bot'] !== undefined, definition);
  const workflow = definition['workflow'];
  const errors = placement.length > 0 || !isRecord(workflow) ? placement : checkSchedules(workflow['schedules']);
  if (errors.length > 0) throw new InvalidDefinitionError(errors);
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
