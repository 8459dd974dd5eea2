import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import {
  create,
  fromBinary,
  INVOCATION_QUERY_SUBJECTS,
  isUuid,
  ListInvocationLogsReplySchema,
  ListInvocationLogsRequestSchema,
  toBinary,
  type ListInvocationLogsRequest,
} from '@runline/contracts';
import { listRunLogs, type RunLogFilter, type RunLogPosition } from './run-logs.repository.js';
import { optional, timeOf } from './query-fields.js';

const MAX_LIMIT = 200;

/**
 * Answers the gateway's GET /external-invocations/logs: one page of the organization's runs.
 * The gateway has validated the query; what does not hold here (a malformed id) finds nothing
 * rather than failing, and the limit is held to 1..200 whatever was sent.
 */
@Controller()
export class ListRunLogsHandler {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_LOGS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListInvocationLogsRequestSchema, data);
    const filter = filterOf(request);
    const after: RunLogPosition | null =
      request.afterId !== '' && isUuid(request.afterId) && timeOf(request.afterCreatedAt) ? { createdAt: request.afterCreatedAt, id: request.afterId } : null;
    const page = filter
      ? await listRunLogs(this.dataSource, filter, Math.min(MAX_LIMIT, Math.max(1, request.limit || 50)), after)
      : { rows: [], next: null };
    const reply = create(ListInvocationLogsReplySchema, {
      rowsJson: JSON.stringify(page.rows),
      nextCreatedAt: page.next?.createdAt ?? '',
      nextId: page.next?.id ?? '',
    });
    return toBinary(ListInvocationLogsReplySchema, reply);
  }
}

/** The filter of a request, or null when it cannot match anything (an id that is not a uuid). */
function filterOf(request: ListInvocationLogsRequest): RunLogFilter | null {
  if (!isUuid(request.orgId) || (request.projectId !== '' && !isUuid(request.projectId))) return null;
  return {
    orgId: request.orgId,
    projectId: optional(request.projectId),
    status: optional(request.status),
    targetType: optional(request.targetType),
    mode: optional(request.mode),
    triggerSource: optional(request.triggerSource),
    from: timeOf(request.from),
    to: timeOf(request.to),
    q: optional(request.q),
  };
}
