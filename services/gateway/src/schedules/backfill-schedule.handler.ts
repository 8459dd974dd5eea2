import { Injectable } from '@nestjs/common';
import { isISO8601 } from 'class-validator';
import {
  BackfillScheduleReplySchema,
  BackfillScheduleRequestSchema,
  create,
  fromBinary,
  SCHEDULER_REQUEST_SUBJECTS,
  ScheduleRunOutcome,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { MAX_BACKFILL_FIRES, SCHEDULE_MESSAGES } from './schedule-messages.js';

const BODY_FIELDS = new Set(['from', 'to']);

/** `{from, to}`: ISO 8601 date-times with `from` before `to`; anything else is refused naming what to fix. */
export function parseBackfillBody(body: unknown): { from: Date; to: Date } {
  const record = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  for (const field of Object.keys(record)) if (!BODY_FIELDS.has(field)) throw new DomainError('invalid', SCHEDULE_MESSAGES.unknownField(field));
  if (record.from === undefined || record.to === undefined) throw new DomainError('invalid', SCHEDULE_MESSAGES.fromToRequired);
  const from = dateOf(record.from, 'from');
  const to = dateOf(record.to, 'to');
  if (from.getTime() >= to.getTime()) throw new DomainError('invalid', SCHEDULE_MESSAGES.fromNotBeforeTo);
  return { from, to };
}

function dateOf(value: unknown, field: 'from' | 'to'): Date {
  if (typeof value !== 'string' || !isISO8601(value, { strict: true })) throw new DomainError('invalid', SCHEDULE_MESSAGES.dateInvalid(field));
  return new Date(value);
}

/**
 * A backfill: one run per fire time of the schedule in [from, to), oldest first, overlap
 * ignored; the scheduler records the fires and starts them. More than 1,000 fire times: 400,
 * nothing started.
 */
@Injectable()
export class BackfillScheduleHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId' | 'configVersion'>, scheduleId: string, body: unknown): Promise<{ count: number }> {
    const { from, to } = parseBackfillBody(body);
    const request = create(BackfillScheduleRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      scheduleId,
      from: timestampFromDate(from),
      to: timestampFromDate(to),
      configVersion: BigInt(scope.configVersion),
    });
    const reply = fromBinary(BackfillScheduleReplySchema, await this.services.request('scheduler', SCHEDULER_REQUEST_SUBJECTS.BACKFILL_SCHEDULE, toBinary(BackfillScheduleRequestSchema, request)));
    switch (reply.outcome) {
      case ScheduleRunOutcome.ACCEPTED:
        return { count: reply.count };
      case ScheduleRunOutcome.NOT_FOUND:
        throw new DomainError('not-found', SCHEDULE_MESSAGES.notFound);
      case ScheduleRunOutcome.TOO_MANY:
        throw new DomainError('invalid', SCHEDULE_MESSAGES.tooMany(reply.limit || MAX_BACKFILL_FIRES));
      default:
        throw new Error(`unexpected backfill outcome ${reply.outcome}`);
    }
  }
}
