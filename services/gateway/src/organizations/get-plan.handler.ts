import { Injectable } from '@nestjs/common';
import { create, fromBinary, GetQuotaUsageReplySchema, GetQuotaUsageRequestSchema, INVOCATION_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import { OrganizationRepository } from '../platform/store/organization.repository.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/**
 * An organization's plan with its current usage. The plan is ours; the billing period and the
 * count are the invocation service's, which keeps the quota counter (never read across schemas).
 */
@Injectable()
export class GetPlanHandler {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly services: ServiceClient,
  ) {}

  /** For an organization the caller was checked to be a member of. */
  async execute(query: { orgId: string }) {
    const organization = await this.organizations.findById(query.orgId);
    if (!organization) throw new Error(`organization ${query.orgId} does not exist`);
    const reply = fromBinary(
      GetQuotaUsageReplySchema,
      await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.GET_QUOTA_USAGE, toBinary(GetQuotaUsageRequestSchema, create(GetQuotaUsageRequestSchema, { orgId: query.orgId }))),
    );
    return {
      monthlyQuota: organization.monthlyQuota,
      rateLimitPerMinute: organization.rateLimitPerMinute,
      rateLimitWindowMs: organization.rateLimitWindowMs,
      renewalDay: organization.renewalDay,
      periodStart: reply.periodStart,
      used: Number(reply.used),
    };
  }
}
