import { Injectable } from '@nestjs/common';
import type { MemberRole } from '../platform/store/membership.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { OrganizationRepository } from '../platform/store/organization.repository.js';

/** Adds a user to an organization with a role (OWNERs only; checked by the caller). */
@Injectable()
export class AddMemberHandler {
  constructor(private readonly organizations: OrganizationRepository) {}

  async execute(command: { orgId: string; userId: string; role: MemberRole }) {
    const added = await this.organizations.addMember(command.orgId, command.userId, command.role);
    if (!added) throw new DomainError('conflict', 'User is already a member of this organization');
    return { orgId: command.orgId, userId: command.userId, role: command.role };
  }
}
