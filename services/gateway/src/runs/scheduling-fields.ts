import { RUN_MESSAGES } from './run-messages.js';

/**
 * The scheduling rules of the spec (async trigger endpoints and PATCH reschedule): `runAt`, an
 * ISO 8601 date-time with `Z` or an offset, in the future; or `delaySeconds`, a number > 0;
 * never both. Pure: the caller passes the time it received the request.
 */

/** How far ahead a run may be scheduled (our choice; the spec gives no bound): 365 days. */
export const MAX_SCHEDULE_AHEAD_DAYS = 365;
export const MAX_DELAY_SECONDS = MAX_SCHEDULE_AHEAD_DAYS * 24 * 60 * 60;

export type SchedulingFields =
  /** When the run is to start, with millisecond precision. */
  | { runAt: Date }
  /** The spec's (or our) 400 message. */
  | { error: string };

/**
 * Reads `runAt` / `delaySeconds` from a request body. A field counts as sent when its key is
 * present with any value, `null` included (a null is not a time: refusing it is safer than
 * starting the run at once). Checks, first failure wins:
 * 1. both sent → `Provide either runAt or delaySeconds, not both`;
 * 2. runAt not a string in ISO 8601 with `Z` or an offset, or not a real date → `runAt must be a valid ISO date-time`;
 * 3. runAt now or past → `runAt must be in the future`;
 * 4. runAt more than MAX_SCHEDULE_AHEAD_DAYS ahead → `runAt must be at most 365 days in the future`;
 * 5. delaySeconds not a number, zero or negative → `delaySeconds must be a positive number`;
 * 6. delaySeconds over MAX_DELAY_SECONDS → `delaySeconds must be at most 31536000 (365 days)`.
 * Returns undefined when neither field was sent.
 */
export function schedulingFieldsOf(body: Readonly<Record<string, unknown>>, now: Date): SchedulingFields | undefined {
  const { runAt, delaySeconds } = body;
  const hasRunAt = runAt !== undefined;
  const hasDelay = delaySeconds !== undefined;
  if (hasRunAt && hasDelay) return { error: RUN_MESSAGES.schedulingBothFields };
  if (hasRunAt) return runAtOf(runAt, now);
  if (hasDelay) return delayOf(delaySeconds, now);
  return undefined;
}

function runAtOf(value: unknown, now: Date): SchedulingFields {
  const at = typeof value === 'string' ? parseIsoDateTimeWithOffset(value) : undefined;
  if (at === undefined) return { error: RUN_MESSAGES.runAtInvalid };
  if (at.getTime() <= now.getTime()) return { error: RUN_MESSAGES.runAtNotInFuture };
  if (at.getTime() > now.getTime() + MAX_DELAY_SECONDS * 1000) return { error: RUN_MESSAGES.runAtTooFar };
  return { runAt: at };
}

function delayOf(value: unknown, now: Date): SchedulingFields {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return { error: RUN_MESSAGES.delaySecondsInvalid };
  if (value > MAX_DELAY_SECONDS) return { error: RUN_MESSAGES.delaySecondsTooLarge };
  // At least 1 ms, so a tiny delay still lands after the receive time.
  return { runAt: new Date(now.getTime() + Math.max(1, Math.round(value * 1000))) };
}

// date T time (seconds and fraction optional) zone; `t`/`z` as RFC 3339 allows.
const ISO_DATE_TIME_WITH_ZONE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * An ISO 8601 date-time that names its zone, as a Date (fractions beyond milliseconds are cut).
 * Date.parse is not used: it reads a zone-less time as local time and rolls 30 February over
 * into March.
 */
export function parseIsoDateTimeWithOffset(text: string): Date | undefined {
  const match = ISO_DATE_TIME_WITH_ZONE.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '0', fraction = '', zulu, sign, offsetHours = '0', offsetMinutes = '0'] = match;
  const [y, mo, d, h, mi, s, oh, om] = [year, month, day, hour, minute, second, offsetHours, offsetMinutes].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  if (zulu === undefined && (oh > 23 || om > 59)) return undefined;
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const offsetMs = zulu === undefined ? (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000 : 0;
  const utc = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, ms);
  return new Date(utc.getTime() - offsetMs);
}

function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}
