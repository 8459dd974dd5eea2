import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { create, fromBinary, GetQuotaUsageReplySchema, GetQuotaUsageRequestSchema, INVOCATION_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import { quotaPeriodOf } from '../lifecycle/monthly-quota.js';
import { currentUsage, renewalDayOf } from '../runs/usage-counters.repository.js';

/**
 * Answers the console's plan page: the billing period and the count the monthly quota check
 * uses (same period rule, same counter), so the page and a 429 never disagree.
 */
@Controller()
export class ReadQuotaUsageHandler {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(INVOCATION_QUERY_SUBJECTS.GET_QUOTA_USAGE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(GetQuotaUsageRequestSchema, data);
    // One snapshot, so the period and the count agree even across a plan change.
    const reply = await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const period = quotaPeriodOf(new Date(), await renewalDayOf(manager, request.orgId));
      const used = await currentUsage(manager, request.orgId, period);
      return create(GetQuotaUsageReplySchema, { periodStart: period.start.toISOString(), used: BigInt(used) });
    });
    return toBinary(GetQuotaUsageReplySchema, reply);
  }
}
