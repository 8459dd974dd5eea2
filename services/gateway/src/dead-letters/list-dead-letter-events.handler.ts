import { Injectable } from '@nestjs/common';
import { create, DEAD_LETTER_QUERY_SUBJECTS, fromBinary, ListDeadLettersReplySchema, ListDeadLettersRequestSchema, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

export const DEAD_LETTER_LIST_MESSAGES = {
  limitInvalid: 'limit must be an integer',
  offsetInvalid: 'offset must be an integer',
  unresolvedOnlyInvalid: 'unresolvedOnly must be true or false',
} as const;

export const DEAD_LETTER_LIMIT = { default: 50, max: 200 } as const;

/** The list's query string, as sent. */
export interface DeadLetterListQuery {
  source?: string;
  unresolvedOnly?: string;
  limit?: string;
  offset?: string;
}

/** The project's dead-letter events, answered by the dead-letter service (request/reply). */
@Injectable()
export class ListDeadLetterEventsHandler {
  constructor(private readonly services: ServiceClient) {}

  /**
   * limit defaults to 50 and is held to 1..200, offset defaults to 0 and is held to >= 0; the
   * answer says which were used. A value that is not an integer is invalid.
   */
  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId'>, query: DeadLetterListQuery): Promise<{ data: unknown; total: number; limit: number; offset: number }> {
    const limit = Math.min(DEAD_LETTER_LIMIT.max, Math.max(1, integer(query.limit, DEAD_LETTER_LIMIT.default, DEAD_LETTER_LIST_MESSAGES.limitInvalid)));
    const offset = Math.max(0, integer(query.offset, 0, DEAD_LETTER_LIST_MESSAGES.offsetInvalid));
    const unresolvedOnly = query.unresolvedOnly === undefined || query.unresolvedOnly === '' ? false : booleanOf(query.unresolvedOnly);
    const request = create(ListDeadLettersRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      source: typeof query.source === 'string' ? query.source : '',
      unresolvedOnly,
      limit,
      offset,
    });
    const replyBytes = await this.services.request('deadLetter', DEAD_LETTER_QUERY_SUBJECTS.LIST_DEAD_LETTERS, toBinary(ListDeadLettersRequestSchema, request));
    const reply = fromBinary(ListDeadLettersReplySchema, replyBytes);
    return { data: JSON.parse(reply.dataJson) as unknown, total: reply.total, limit, offset };
  }
}

function integer(value: string | undefined, fallback: number, message: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^-?\d{1,9}$/.test(value)) throw new DomainError('invalid', message);
  return Number(value);
}

function booleanOf(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new DomainError('invalid', DEAD_LETTER_LIST_MESSAGES.unresolvedOnlyInvalid);
}
