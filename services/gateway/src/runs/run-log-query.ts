/**
 * The query strings of GET /external-invocations/logs and /metrics, checked and normalised
 * before anything is read: each bad value is a 400 whose message names the parameter.
 */
import { UUID_TEXT } from '@runline/contracts';
import { DomainError } from '../platform/errors/domain-error.js';
import { parseIsoDateTimeWithOffset } from './scheduling-fields.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './start-run.handler.js';

export const RUN_STATUSES = ['SCHEDULED', 'QUEUED', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'] as const;
export const RUN_TARGET_TYPES = ['BOT', 'FLOW', 'AUTOMATION'] as const;
export const RUN_MODES = ['SYNC', 'ASYNC'] as const;
export const RUN_TRIGGER_SOURCES = ['WEBHOOK', 'SCHEDULE', 'POLLING', 'REPLAY'] as const;

export const LOGS_LIMIT = { default: 50, max: 200 } as const;
/** The most buckets one metrics answer holds (1000 hours is about 41 days). */
export const MAX_METRICS_BUCKETS = 1000;
/** Without `bucket`, windows up to this long get hour buckets, longer ones day buckets. */
export const HOUR_BUCKETS_UP_TO_MS = 48 * 3_600_000;
export const DEFAULT_METRICS_WINDOW_MS = 24 * 3_600_000;

/** Ours (the spec has none). */
export const RUN_LOG_QUERY_MESSAGES = {
  given: (name: string) => `${name} must be given once`,
  oneOf: (name: string, values: readonly string[]) => `${name} must be one of: ${values.join(', ')}`,
  time: (name: string) => `${name} must be a valid ISO date-time`,
  fromBeforeTo: 'from must be before to',
  limit: `limit must be an integer from 1 to ${LOGS_LIMIT.max}`,
  cursor: 'cursor is malformed',
  q: `q must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
  bucket: 'bucket must be hour or day',
  tooManyBuckets: (bucket: 'hour' | 'day') =>
    `from and to span more than ${MAX_METRICS_BUCKETS} ${bucket} buckets; ${bucket === 'hour' ? 'use bucket=day or ' : 'use '}a shorter window`,
} as const;

/** The query string as Fastify parses it: a repeated parameter is an array. */
export type RawQuery = Record<string, string | string[] | undefined>;

/** One value of a parameter, or undefined when absent or empty. */
export function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.given(name));
  return value === undefined || value === '' ? undefined : value;
}

export function oneOf<T extends string>(query: RawQuery, name: string, values: readonly T[]): T | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.oneOf(name, values));
  return value as T;
}

export function timeParameter(query: RawQuery, name: 'from' | 'to'): Date | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  const time = parseIsoDateTimeWithOffset(value);
  if (!time) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.time(name));
  return time;
}

export function assertOrdered(from: Date | undefined, to: Date | undefined): void {
  if (from && to && from.getTime() >= to.getTime()) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.fromBeforeTo);
}

export function limitParameter(query: RawQuery): number {
  const value = single(query, 'limit');
  if (value === undefined) return LOGS_LIMIT.default;
  const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= LOGS_LIMIT.max)) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.limit);
  return limit;
}

export function qParameter(query: RawQuery): string | undefined {
  const value = single(query, 'q')?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.q);
  return value;
}

/** A keyset position: the run's created_at (UTC, microseconds) and id. */
export interface LogCursor {
  createdAt: string;
  id: string;
}

// The id in lower case only, as encodeCursor wrote it (PostgreSQL's form): a cursor is ours, not typed by a person.
const CURSOR_TEXT = new RegExp(`^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z)\\|(${UUID_TEXT})$`);

/** Opaque to clients: base64url of `<createdAt>|<id>`. */
export function encodeCursor(cursor: LogCursor): string {
  return Buffer.from(`${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url');
}

export function cursorParameter(query: RawQuery): LogCursor | undefined {
  const value = single(query, 'cursor');
  if (value === undefined) return undefined;
  const match = /^[A-Za-z0-9_-]{1,200}$/.test(value) ? CURSOR_TEXT.exec(Buffer.from(value, 'base64url').toString('utf8')) : null;
  if (!match || Number.isNaN(Date.parse(match[1]!))) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.cursor);
  return { createdAt: match[1]!, id: match[2]! };
}

/**
 * The metrics window and bucket: `to` defaults to now and `from` to 24 hours before `to`;
 * `bucket` defaults to hour for windows up to 48 hours and day beyond; at most 1000 buckets.
 */
export function metricsWindow(query: RawQuery, now: Date): { from: Date; to: Date; bucket: 'hour' | 'day' } {
  const bucketGiven = single(query, 'bucket');
  if (bucketGiven !== undefined && bucketGiven !== 'hour' && bucketGiven !== 'day') throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.bucket);
  const givenFrom = timeParameter(query, 'from');
  const givenTo = timeParameter(query, 'to');
  assertOrdered(givenFrom, givenTo);
  const to = givenTo ?? (givenFrom && givenFrom.getTime() >= now.getTime() ? new Date(givenFrom.getTime() + DEFAULT_METRICS_WINDOW_MS) : now);
  const from = givenFrom ?? new Date(to.getTime() - DEFAULT_METRICS_WINDOW_MS);
  const bucket = bucketGiven ?? (to.getTime() - from.getTime() <= HOUR_BUCKETS_UP_TO_MS ? 'hour' : 'day');
  if (bucketCount(from, to, bucket) > MAX_METRICS_BUCKETS) throw new DomainError('invalid', RUN_LOG_QUERY_MESSAGES.tooManyBuckets(bucket));
  return { from, to, bucket };
}

/** UTC buckets from the one holding `from` to the one holding the last instant before `to`. */
export function bucketCount(from: Date, to: Date, bucket: 'hour' | 'day'): number {
  const width = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const first = Math.floor(from.getTime() / width);
  const last = Math.floor((to.getTime() - 1) / width);
  return last - first + 1;
}
