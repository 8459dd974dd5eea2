import { Injectable } from '@nestjs/common';
import { isISO8601 } from 'class-validator';
import {
  BulkReplayDeadLettersReplySchema,
  BulkReplayDeadLettersRequestSchema,
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { SERVICE_UNAVAILABLE, ServiceClient } from '../platform/service-client/service-client.js';

/** The dead-letter target types a filter may name (the spec's Dead-letter event). */
export const DEAD_LETTER_TARGET_TYPES = ['polling', 'FLOW'] as const;

/** Ours (the design gives none): what a bulk replay body is refused with, as 400. */
export const BULK_REPLAY_MESSAGES = {
  filterRequired: 'filter is required (an object; {} matches every event not yet replayed)',
  filterNotObject: 'filter must be an object',
  unknownField: (field: string) => `Unknown field: ${field}`,
  sourceInvalid: 'filter.source must be a non-empty string',
  targetTypeInvalid: `filter.targetType must be one of: ${DEAD_LETTER_TARGET_TYPES.join(', ')}`,
  dateInvalid: (field: 'from' | 'to') => `filter.${field} must be an ISO 8601 date-time`,
  fromAfterTo: 'filter.from must not be after filter.to',
  dryRunInvalid: 'dryRun must be true or false',
} as const;

const BODY_FIELDS = new Set(['filter', 'dryRun']);
const FILTER_FIELDS = new Set(['source', 'targetType', 'from', 'to']);

/** A bulk replay request, validated. */
export interface BulkReplayRequest {
  source: string | null;
  targetType: string | null;
  from: Date | null;
  to: Date | null;
  dryRun: boolean;
}

export type BulkReplayAnswer = { matched: number } | { matched: number; succeeded: number; failed: number; pending: number; remaining: number };

/**
 * `{filter: {source?, targetType?, from?, to?}, dryRun?}`, checked field by field so the 400
 * names what to fix: unknown fields (also inside filter), a targetType that no event has, dates
 * that are not ISO 8601, from after to.
 */
export function parseBulkReplayBody(body: unknown): BulkReplayRequest {
  const record = isRecord(body) ? body : {};
  for (const field of Object.keys(record)) if (!BODY_FIELDS.has(field)) throw invalid(BULK_REPLAY_MESSAGES.unknownField(field));
  if (record.filter === undefined || record.filter === null) throw invalid(BULK_REPLAY_MESSAGES.filterRequired);
  if (!isRecord(record.filter)) throw invalid(BULK_REPLAY_MESSAGES.filterNotObject);
  const filter = record.filter;
  for (const field of Object.keys(filter)) if (!FILTER_FIELDS.has(field)) throw invalid(BULK_REPLAY_MESSAGES.unknownField(`filter.${field}`));
  if (filter.source !== undefined && (typeof filter.source !== 'string' || filter.source === '')) throw invalid(BULK_REPLAY_MESSAGES.sourceInvalid);
  if (filter.targetType !== undefined && !(DEAD_LETTER_TARGET_TYPES as readonly unknown[]).includes(filter.targetType)) {
    throw invalid(BULK_REPLAY_MESSAGES.targetTypeInvalid);
  }
  const from = dateOf(filter.from, 'from');
  const to = dateOf(filter.to, 'to');
  if (from && to && from.getTime() > to.getTime()) throw invalid(BULK_REPLAY_MESSAGES.fromAfterTo);
  if (record.dryRun !== undefined && typeof record.dryRun !== 'boolean') throw invalid(BULK_REPLAY_MESSAGES.dryRunInvalid);
  return {
    source: (filter.source as string | undefined) ?? null,
    targetType: (filter.targetType as string | undefined) ?? null,
    from,
    to,
    dryRun: record.dryRun === true,
  };
}

/**
 * Replays the project's dead letters not yet replayed that match a filter, each at most once (the
 * dead-letter service claims each event as a single replay does). One request replays a bounded
 * number and answers before the gateway's own deadline (it tells the service how long it
 * waits); the answer says what is left (`remaining`) for the next request.
 */
@Injectable()
export class BulkReplayDeadLetterEventsHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId' | 'publishedVersion' | 'configVersion'>, body: unknown): Promise<BulkReplayAnswer> {
    const parsed = parseBulkReplayBody(body);
    const request = create(BulkReplayDeadLettersRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      source: parsed.source ?? '',
      targetType: parsed.targetType ?? '',
      ...(parsed.from ? { from: timestampFromDate(parsed.from) } : {}),
      ...(parsed.to ? { to: timestampFromDate(parsed.to) } : {}),
      dryRun: parsed.dryRun,
      publishedVersion: scope.publishedVersion,
      configVersion: BigInt(scope.configVersion),
      budgetMs: replyBudgetMs(this.services.deadlineMs),
    });
    const replyBytes = await this.services.request('deadLetter', DEAD_LETTER_REQUEST_SUBJECTS.BULK_REPLAY_DEAD_LETTERS, toBinary(BulkReplayDeadLettersRequestSchema, request));
    const reply = fromBinary(BulkReplayDeadLettersReplySchema, replyBytes);
    if (parsed.dryRun) return { matched: reply.matched };
    if (reply.invocationUnavailable) throw new DomainError('unavailable', SERVICE_UNAVAILABLE.invocation);
    return { matched: reply.matched, succeeded: reply.succeeded, failed: reply.failed, pending: reply.pending, remaining: reply.remaining };
  }
}

/**
 * How long the dead-letter service may work before it answers: the gateway's deadline less a
 * margin for the answer's own way back (a fifth of it, at most 2 s), so the client gets the
 * figures rather than a 503.
 */
export function replyBudgetMs(deadlineMs: number): number {
  return Math.max(1, deadlineMs - Math.min(2000, Math.floor(deadlineMs / 5)));
}

function dateOf(value: unknown, field: 'from' | 'to'): Date | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !isISO8601(value, { strict: true, strictSeparator: true })) throw invalid(BULK_REPLAY_MESSAGES.dateInvalid(field));
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalid(BULK_REPLAY_MESSAGES.dateInvalid(field));
  return date;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalid(message: string): DomainError {
  return new DomainError('invalid', message);
}
