import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import {
  create,
  DEAD_LETTER_QUERY_SUBJECTS,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  ListDeadLettersReplySchema,
  ListDeadLettersRequestSchema,
  ReplayDeadLetterReplySchema,
  ReplayDeadLetterRequestSchema,
  ReplayOutcome,
  toBinary,
} from '@runline/contracts';
import { GatewayConfig } from '../config.js';
import { ApiError } from '../http/api-error.js';
import type { ExternalCaller } from '../http/external/external-api.guard.js';
import { requestService, SERVICE_UNAVAILABLE } from '../http/external/polling-requests.js';

export const DEAD_LETTER_MESSAGES = {
  alreadyReplayed: 'Event has already been replayed',
  // Ours: the spec answers a missing event with 422 but shows no message for it.
  notFound: 'Dead-letter event not found',
  idRequired: 'id is required',
  limitInvalid: 'limit must be an integer',
  offsetInvalid: 'offset must be an integer',
  unresolvedOnlyInvalid: 'unresolvedOnly must be true or false',
} as const;

export const DEAD_LETTER_LIMIT = { default: 50, max: 200 } as const;

export interface DeadLetterListQuery {
  source?: string;
  unresolvedOnly?: string;
  limit?: string;
  offset?: string;
}

/** The dead-letter routes, answered by the dead-letter service (request/reply). */
@Injectable()
export class DeadLettersHandler {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  /**
   * limit defaults to 50 and is held to 1..200, offset defaults to 0 and is held to >= 0; the
   * answer says which were used. A value that is not an integer is a 400.
   */
  async list(caller: ExternalCaller, query: DeadLetterListQuery): Promise<{ data: unknown; total: number; limit: number; offset: number }> {
    const limit = Math.min(DEAD_LETTER_LIMIT.max, Math.max(1, integer(query.limit, DEAD_LETTER_LIMIT.default, DEAD_LETTER_MESSAGES.limitInvalid)));
    const offset = Math.max(0, integer(query.offset, 0, DEAD_LETTER_MESSAGES.offsetInvalid));
    const unresolvedOnly = query.unresolvedOnly === undefined || query.unresolvedOnly === '' ? false : booleanOf(query.unresolvedOnly);
    const request = create(ListDeadLettersRequestSchema, {
      orgId: caller.orgId,
      projectId: caller.projectId,
      source: typeof query.source === 'string' ? query.source : '',
      unresolvedOnly,
      limit,
      offset,
    });
    const reply = fromBinary(ListDeadLettersReplySchema, await this.ask(DEAD_LETTER_QUERY_SUBJECTS.LIST_DEAD_LETTERS, toBinary(ListDeadLettersRequestSchema, request)));
    return { data: JSON.parse(reply.dataJson) as unknown, total: reply.total, limit, offset };
  }

  /** 200 `{success: true}`, or 422 with the reason, "Event has already been replayed", or not found. */
  async replay(caller: ExternalCaller, id: string | undefined): Promise<{ success: true }> {
    if (typeof id !== 'string' || id === '') throw new ApiError(400, DEAD_LETTER_MESSAGES.idRequired);
    const request = create(ReplayDeadLetterRequestSchema, {
      orgId: caller.orgId,
      projectId: caller.projectId,
      id,
      publishedVersion: caller.publishedVersion,
      configVersion: BigInt(caller.configVersion),
    });
    const reply = fromBinary(ReplayDeadLetterReplySchema, await this.ask(DEAD_LETTER_REQUEST_SUBJECTS.REPLAY_DEAD_LETTER, toBinary(ReplayDeadLetterRequestSchema, request)));
    switch (reply.outcome) {
      case ReplayOutcome.SUCCEEDED:
        return { success: true };
      case ReplayOutcome.FAILED:
        throw new ApiError(422, reply.reason);
      case ReplayOutcome.ALREADY_REPLAYED:
        throw new ApiError(422, DEAD_LETTER_MESSAGES.alreadyReplayed);
      case ReplayOutcome.NOT_FOUND:
        throw new ApiError(422, DEAD_LETTER_MESSAGES.notFound);
      default:
        throw new Error(`unexpected replay outcome ${reply.outcome}`);
    }
  }

  private ask(subject: string, request: Uint8Array): Promise<Uint8Array> {
    return requestService(this.bus, subject, request, this.config.SERVICE_REQUEST_TIMEOUT_MS, SERVICE_UNAVAILABLE.deadLetter);
  }
}

function integer(value: string | undefined, fallback: number, message: string): number {
  if (value === undefined || value === '') return fallback;
  if (!/^-?\d{1,9}$/.test(value)) throw new ApiError(400, message);
  return Number(value);
}

function booleanOf(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ApiError(400, DEAD_LETTER_MESSAGES.unresolvedOnlyInvalid);
}
