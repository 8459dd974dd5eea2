import { Injectable } from '@nestjs/common';
import { create, fromBinary, INVOCATION_QUERY_SUBJECTS, ListInvocationLogsReplySchema, ListInvocationLogsRequestSchema, toBinary } from '@runline/contracts';
import { ServiceClient } from '../platform/service-client/service-client.js';

/**
 * One run's logs row (GET …/external-invocations/logs), read from the invocation service's
 * read model. Reads of the same run in flight at once share one request: every project stream
 * of this replica that hears an event of the run needs the same row.
 */
@Injectable()
export class RunLogRowsClient {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly services: ServiceClient) {}

  rowOf(orgId: string, projectId: string, invocationId: string): Promise<unknown> {
    const key = `${projectId} ${invocationId}`;
    let reading = this.inFlight.get(key);
    if (!reading) {
      reading = this.read(orgId, projectId, invocationId).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, reading);
    }
    return reading;
  }

  private async read(orgId: string, projectId: string, invocationId: string): Promise<unknown> {
    const request = create(ListInvocationLogsRequestSchema, { orgId, projectId, q: invocationId, limit: 1 });
    const bytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_LOGS, toBinary(ListInvocationLogsRequestSchema, request));
    const rows = JSON.parse(fromBinary(ListInvocationLogsReplySchema, bytes).rowsJson) as unknown[];
    return rows[0] ?? null;
  }
}
