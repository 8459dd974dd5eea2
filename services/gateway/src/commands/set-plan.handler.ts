import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';
import { RateLimitPolicies } from '../http/external/rate-limits/rate-limit-policies.js';

export interface Plan {
  monthlyQuota: number | null;
  rateLimitPerMinute: number | null;
  rateLimitWindowMs: number | null;
  renewalDay: number | null;
}

/** Replaces an organization's plan (platform administrators only; checked by the caller). */
@Injectable()
export class SetPlanHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly rateLimits: RateLimitPolicies,
  ) {}

  async execute(command: { orgId: string; plan: Plan }): Promise<Plan & { orgId: string }> {
    const result = await this.transactions.run(async ({ manager, emit }) => {
      const org = await manager.findOneOrFail(OrganizationEntity, { where: { id: command.orgId }, lock: { mode: 'pessimistic_write' } });
      Object.assign(org, command.plan, { updatedAt: new Date() });
      await manager.save(OrganizationEntity, org);
      emit(gatewayEvents.organizationPlanChanged(org));
      return { orgId: org.id, ...command.plan };
    });
    // The plan's rate limit applies on this gateway at once; other replicas within the cache TTL.
    this.rateLimits.evictOrganization(command.orgId);
    return result;
  }
}
