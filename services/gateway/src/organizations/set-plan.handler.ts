import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { RateLimitPolicies } from '../platform/rate-limits/rate-limit-policies.js';
import { OrganizationRepository } from '../platform/store/organization.repository.js';

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
    private readonly organizations: OrganizationRepository,
    private readonly rateLimits: RateLimitPolicies,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { orgId: string; plan: Plan }): Promise<Plan & { orgId: string }> {
    const changed = await this.transactions.run(async ({ manager, emit }) => {
      const org = await this.organizations.lockForUpdate(manager, command.orgId);
      Object.assign(org, command.plan, { updatedAt: new Date(), planVersion: org.planVersion + 1 });
      await this.organizations.savePlan(manager, org);
      const event = gatewayEvents.organizationPlanChanged(org);
      emit(event);
      return { view: { orgId: org.id, ...command.plan }, event };
    });
    this.rateLimits.evictOrganization(command.orgId);
    await this.propagation.inForce([changed.event]);
    return changed.view;
  }
}
