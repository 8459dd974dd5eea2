import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import type { OrganizationEntity } from '../platform/store/organization.entity.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { OrganizationRepository } from '../platform/store/organization.repository.js';

/** Creates an organization; its creator becomes its OWNER. */
@Injectable()
export class CreateOrganizationHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly organizations: OrganizationRepository,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { userId: string; name: string }): Promise<{ orgId: string; name: string }> {
    const created = await this.transactions.run(async ({ manager, emit }) => {
      const now = new Date();
      const org: OrganizationEntity = {
        id: randomUUID(),
        name: command.name,
        monthlyQuota: null,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
        renewalDay: null,
        planVersion: 0,
        createdAt: now,
        updatedAt: now,
      };
      await this.organizations.insertWithOwner(manager, org, command.userId);
      const event = gatewayEvents.organizationCreated(org);
      emit(event);
      return { view: { orgId: org.id, name: org.name }, events: [event] };
    });
    await this.propagation.inForce(created.events);
    return created.view;
  }
}
