import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, DEAD_LETTER_QUERY_SUBJECTS, fromBinary, ListDeadLettersReplySchema, ListDeadLettersRequestSchema, toBinary } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { listDeadLetters, type DeadLetterRow } from '../dead-letters/dead-letters.repository.js';

/** A page of the project's dead letters, newest first, in the spec's Dead-letter event shape. */
@Controller()
export class ListDeadLettersHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @MessagePattern(DEAD_LETTER_QUERY_SUBJECTS.LIST_DEAD_LETTERS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListDeadLettersRequestSchema, data);
    const { rows, total } = await listDeadLetters(this.transactions.dataSource.manager, {
      projectId: request.projectId,
      source: request.source || null,
      unresolvedOnly: request.unresolvedOnly,
      limit: request.limit,
      offset: request.offset,
    });
    const documents = rows.map((row) => this.document(row));
    return toBinary(ListDeadLettersReplySchema, create(ListDeadLettersReplySchema, { dataJson: JSON.stringify(documents), total }));
  }

  private document(row: DeadLetterRow): Record<string, unknown> {
    return {
      id: row.id,
      source: row.source,
      targetType: row.target_type,
      triggerKey: row.trigger_key,
      requestPayload: row.display_payload ?? (JSON.parse(this.secrets.open(row.sealed_payload)) as unknown),
      failureReason: row.failure_reason,
      attemptCount: row.attempt_count,
      replayedAt: row.replayed_at?.toISOString() ?? null,
      replayStatus: row.replay_status,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }
}
