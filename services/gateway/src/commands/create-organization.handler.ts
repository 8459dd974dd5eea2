import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { MembershipEntity } from '../entities/membership.entity.js';
import { OrganizationEntity } from '../entities/organization.entity.js';
import { ChangePropagation } from '../changes/change-propagation.js';
import { gatewayEvents } from '../events/gateway-events.js';

/** Creates an organization; its creator becomes its OWNER. */
@Injectable()
export class CreateOrganizationHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { userId: string; name: string }): Promise<{ orgId: string; name: string }> {
    const created = await this.transactions.run(async ({ manager, emit }) => {
      const now = new Date();
      const org = manager.create(OrganizationEntity, {
        id: randomUUID(),
        name: command.name,
        monthlyQuota: null,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
        renewalDay: null,
        planVersion: 0,
        createdAt: now,
        updatedAt: now,
      });
      await manager.insert(OrganizationEntity, org);
      await manager.insert(MembershipEntity, { orgId: org.id, userId: command.userId, role: 'OWNER', createdAt: now });
      const event = gatewayEvents.organizationCreated(org);
      emit(event);
      return { view: { orgId: org.id, name: org.name }, events: [event] };
    });
    await this.propagation.inForce(created.events);
    return created.view;
  }
}
