import { Injectable } from '@nestjs/common';
import { OrganizationRepository } from '../platform/store/organization.repository.js';

/** The signed-in user's organizations, with the user's role in each. */
@Injectable()
export class ListOrganizationsHandler {
  constructor(private readonly organizations: OrganizationRepository) {}

  async execute(query: { userId: string }) {
    return { data: await this.organizations.listForUser(query.userId) };
  }
}
