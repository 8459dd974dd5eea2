import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { create, fromBinary, GetInvocationMetricsReplySchema, GetInvocationMetricsRequestSchema, INVOCATION_QUERY_SUBJECTS, isUuid, toBinary } from '@runline/contracts';
import { runMetrics } from './run-logs.repository.js';
import { optional, timeOf } from './query-fields.js';

/**
 * Answers the gateway's GET /external-invocations/metrics. The gateway has validated the window
 * and capped its buckets; a request without a valid window or scope is refused here too (an
 * error reply, which the gateway treats as unexpected).
 */
@Controller()
export class ReadRunMetricsHandler {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION_METRICS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(GetInvocationMetricsRequestSchema, data);
    const from = timeOf(request.from);
    const to = timeOf(request.to);
    const bucket = request.bucket === 'day' ? 'day' : request.bucket === 'hour' ? 'hour' : undefined;
    const projectId = optional(request.projectId);
    if (!isUuid(request.orgId) || (projectId !== undefined && !isUuid(projectId)) || !from || !to || !bucket || from >= to) {
      throw new Error('GetInvocationMetricsRequest: invalid organization, project, window or bucket');
    }
    // One snapshot, so `recent` never shows a run the totals do not count (or the other way round).
    const metrics = await this.dataSource.transaction('REPEATABLE READ', (manager) => runMetrics(manager, { orgId: request.orgId, projectId }, { from, to, bucket }));
    return toBinary(GetInvocationMetricsReplySchema, create(GetInvocationMetricsReplySchema, { metricsJson: JSON.stringify(metrics) }));
  }
}
