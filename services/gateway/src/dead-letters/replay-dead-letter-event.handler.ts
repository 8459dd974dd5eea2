import { Injectable } from '@nestjs/common';
import {
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  ReplayDeadLetterReplySchema,
  ReplayDeadLetterRequestSchema,
  ReplayOutcome,
  toBinary,
} from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { SERVICE_UNAVAILABLE, ServiceClient } from '../platform/service-client/service-client.js';

export const DEAD_LETTER_REPLAY_MESSAGES = {
  alreadyReplayed: 'Event has already been replayed',
  // Ours: the spec answers a missing event with 422 but shows no message for it.
  notFound: 'Dead-letter event not found',
  idRequired: 'id is required',
} as const;

/** Replays one dead-letter event, done by the dead-letter service (request/reply). */
@Injectable()
export class ReplayDeadLetterEventHandler {
  constructor(private readonly services: ServiceClient) {}

  /** `{success: true}`, or unprocessable with the reason, "Event has already been replayed", or not found. */
  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId' | 'publishedVersion' | 'configVersion'>, id: string | undefined): Promise<{ success: true }> {
    if (typeof id !== 'string' || id === '') throw new DomainError('invalid', DEAD_LETTER_REPLAY_MESSAGES.idRequired);
    const request = create(ReplayDeadLetterRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      id,
      publishedVersion: scope.publishedVersion,
      configVersion: BigInt(scope.configVersion),
    });
    const replyBytes = await this.services.request('deadLetter', DEAD_LETTER_REQUEST_SUBJECTS.REPLAY_DEAD_LETTER, toBinary(ReplayDeadLetterRequestSchema, request));
    const reply = fromBinary(ReplayDeadLetterReplySchema, replyBytes);
    switch (reply.outcome) {
      case ReplayOutcome.SUCCEEDED:
        return { success: true };
      case ReplayOutcome.FAILED:
        throw new DomainError('unprocessable', reply.reason);
      case ReplayOutcome.ALREADY_REPLAYED:
        throw new DomainError('unprocessable', DEAD_LETTER_REPLAY_MESSAGES.alreadyReplayed);
      case ReplayOutcome.NOT_FOUND:
        throw new DomainError('unprocessable', DEAD_LETTER_REPLAY_MESSAGES.notFound);
      case ReplayOutcome.INVOCATION_UNAVAILABLE:
        throw new DomainError('unavailable', SERVICE_UNAVAILABLE.invocation);
      default:
        throw new Error(`unexpected replay outcome ${reply.outcome}`);
    }
  }
}
