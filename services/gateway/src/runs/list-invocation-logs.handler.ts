import { Injectable } from '@nestjs/common';
import { create, fromBinary, INVOCATION_QUERY_SUBJECTS, ListInvocationLogsReplySchema, ListInvocationLogsRequestSchema, toBinary } from '@runline/contracts';
import { ServiceClient } from '../platform/service-client/service-client.js';
import {
  assertOrdered,
  cursorParameter,
  encodeCursor,
  limitParameter,
  oneOf,
  qParameter,
  RUN_MODES,
  RUN_STATUSES,
  RUN_TARGET_TYPES,
  RUN_TRIGGER_SOURCES,
  timeParameter,
  type RawQuery,
} from './run-log-query.js';

/** The answer of GET /external-invocations/logs. */
export interface InvocationLogsAnswer {
  data: unknown[];
  nextCursor: string | null;
}

/**
 * The console's logs: one page of the organization's runs, newest first, from the invocation
 * service's read model (request/reply). The caller's membership and the project were checked
 * by the console route; this validates the query (400 naming the parameter) and pages with a
 * keyset cursor.
 */
@Injectable()
export class ListInvocationLogsHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: { orgId: string; projectId?: string }, query: RawQuery): Promise<InvocationLogsAnswer> {
    const status = oneOf(query, 'status', RUN_STATUSES);
    const targetType = oneOf(query, 'targetType', RUN_TARGET_TYPES);
    const mode = oneOf(query, 'mode', RUN_MODES);
    const triggerSource = oneOf(query, 'triggerSource', RUN_TRIGGER_SOURCES);
    const from = timeParameter(query, 'from');
    const to = timeParameter(query, 'to');
    assertOrdered(from, to);
    const q = qParameter(query);
    const limit = limitParameter(query);
    const cursor = cursorParameter(query);
    const request = create(ListInvocationLogsRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId ?? '',
      status: status ?? '',
      targetType: targetType ?? '',
      mode: mode ?? '',
      triggerSource: triggerSource ?? '',
      from: from?.toISOString() ?? '',
      to: to?.toISOString() ?? '',
      q: q ?? '',
      limit,
      afterCreatedAt: cursor?.createdAt ?? '',
      afterId: cursor?.id ?? '',
    });
    const replyBytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_LOGS, toBinary(ListInvocationLogsRequestSchema, request));
    const reply = fromBinary(ListInvocationLogsReplySchema, replyBytes);
    const nextCursor = reply.nextId === '' ? null : encodeCursor({ createdAt: reply.nextCreatedAt, id: reply.nextId });
    return { data: JSON.parse(reply.rowsJson) as unknown[], nextCursor };
  }
}
