import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { MembershipEntity } from '../entities/membership.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';

/** Creates an organization; its creator becomes its OWNER. */
@Injectable()
export class CreateOrganizationHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  execute(command: { userId: string; name: string }): Promise<{ orgId: string; name: string }> {
    return this.transactions.run(async ({ manager, emit }) => {
      const now = new Date();
      const org = manager.create(OrganizationEntity, {
        id: randomUUID(),
        name: command.name,
        monthlyQuota: null,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
        renewalDay: null,
        createdAt: now,
        updatedAt: now,
      });
      await manager.insert(OrganizationEntity, org);
      await manager.insert(MembershipEntity, { orgId: org.id, userId: command.userId, role: 'OWNER', createdAt: now });
      emit(gatewayEvents.organizationCreated(org));
      return { orgId: org.id, name: org.name };
    });
  }
}
