import { Injectable } from '@nestjs/common';
import { create, fromBinary, GetInvocationMetricsReplySchema, GetInvocationMetricsRequestSchema, INVOCATION_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { metricsWindow, type RawQuery } from './run-log-query.js';

/**
 * The console's invocation health over a window (README "Invocation health: what each figure
 * counts"), computed by the invocation service from its read model (request/reply). The
 * caller's membership and the project were checked by the console route.
 */
@Injectable()
export class GetInvocationMetricsHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: { orgId: string; projectId?: string }, query: RawQuery, now = new Date()): Promise<Record<string, unknown>> {
    const { from, to, bucket } = metricsWindow(query, now);
    const request = create(GetInvocationMetricsRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId ?? '',
      from: from.toISOString(),
      to: to.toISOString(),
      bucket,
    });
    const replyBytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.GET_INVOCATION_METRICS, toBinary(GetInvocationMetricsRequestSchema, request));
    const metrics = JSON.parse(fromBinary(GetInvocationMetricsReplySchema, replyBytes).metricsJson) as Record<string, unknown>;
    return { from: from.toISOString(), to: to.toISOString(), bucket, ...metrics };
  }
}
