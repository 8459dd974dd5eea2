import { Injectable } from '@nestjs/common';
import { isUuid } from '@runline/contracts';
import type { MemberRole } from '../store/membership.entity.js';
import type { OrganizationEntity } from '../store/organization.entity.js';
import type { ProjectEntity } from '../store/project.entity.js';
import { DomainError } from '../errors/domain-error.js';
import { OrganizationRepository } from '../store/organization.repository.js';
import { ProjectRepository } from '../store/project.repository.js';
import type { ConsoleUser } from './console-auth.guard.js';

/** What an action needs: any member, edit access (OWNER or EDITOR), or OWNER. */
export type AccessLevel = 'member' | 'edit' | 'owner';

const ALLOWED: Record<AccessLevel, readonly MemberRole[]> = {
  member: ['OWNER', 'EDITOR', 'VIEWER'],
  edit: ['OWNER', 'EDITOR'],
  owner: ['OWNER'],
};

export const ACCESS_ERRORS = {
  organizationNotFound: 'Organization not found',
  projectNotFound: 'Project not found',
  platformAdminOnly: 'This action requires the platform-admin role',
  forbidden: {
    member: 'This action requires membership of the organization',
    edit: 'This action requires edit access to the project',
    owner: 'This action requires the OWNER role',
  },
} as const;

/**
 * The console's access rules. An organization the user is not a member of, and a project
 * outside it, answer 404 (their existence is not revealed); a member whose role is too low
 * gets 403.
 */
@Injectable()
export class ConsoleAccess {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly projects: ProjectRepository,
  ) {}

  /** The member's role; `refusal` replaces the 403's message where the spec names its own (`Unauthorized`). */
  async requireOrganization(user: ConsoleUser, orgId: string, level: AccessLevel, refusal: string = ACCESS_ERRORS.forbidden[level]): Promise<MemberRole> {
    const role = isUuid(orgId) ? await this.organizations.roleOf(orgId, user.userId) : null;
    if (!role) throw new DomainError('not-found', ACCESS_ERRORS.organizationNotFound);
    if (!ALLOWED[level].includes(role)) throw new DomainError('forbidden', refusal);
    return role;
  }

  async requireProject(user: ConsoleUser, orgId: string, projectId: string, level: AccessLevel): Promise<ProjectEntity> {
    const role = await this.requireOrganization(user, orgId, 'member');
    const project = isUuid(projectId) ? await this.projects.findInOrganization(projectId, orgId) : null;
    if (!project || project.deletedAt) throw new DomainError('not-found', ACCESS_ERRORS.projectNotFound);
    if (!ALLOWED[level].includes(role)) throw new DomainError('forbidden', ACCESS_ERRORS.forbidden[level]);
    return project;
  }

  /** Plans are set by platform administrators, members or not. */
  async requirePlatformAdmin(user: ConsoleUser, orgId: string): Promise<OrganizationEntity> {
    if (!user.platformAdmin) throw new DomainError('forbidden', ACCESS_ERRORS.platformAdminOnly);
    const organization = isUuid(orgId) ? await this.organizations.findById(orgId) : null;
    if (!organization) throw new DomainError('not-found', ACCESS_ERRORS.organizationNotFound);
    return organization;
  }
}
