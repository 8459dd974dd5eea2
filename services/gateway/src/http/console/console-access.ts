import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MembershipEntity, type MemberRole } from '../../entities/membership.entity.js';
import { OrganizationEntity } from '../../entities/organization.entity.js';
import { ProjectEntity } from '../../entities/project.entity.js';
import { ApiError } from '../api-error.js';
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
  constructor(private readonly dataSource: DataSource) {}

  async requireOrganization(user: ConsoleUser, orgId: string, level: AccessLevel): Promise<MemberRole> {
    const membership = isUuid(orgId)
      ? await this.dataSource.getRepository(MembershipEntity).findOneBy({ orgId, userId: user.userId })
      : null;
    if (!membership) throw new ApiError(404, ACCESS_ERRORS.organizationNotFound);
    if (!ALLOWED[level].includes(membership.role)) throw new ApiError(403, ACCESS_ERRORS.forbidden[level]);
    return membership.role;
  }

  async requireProject(user: ConsoleUser, orgId: string, projectId: string, level: AccessLevel): Promise<ProjectEntity> {
    const role = await this.requireOrganization(user, orgId, 'member');
    const project = isUuid(projectId)
      ? await this.dataSource.getRepository(ProjectEntity).findOneBy({ id: projectId, orgId })
      : null;
    if (!project || project.deletedAt) throw new ApiError(404, ACCESS_ERRORS.projectNotFound);
    if (!ALLOWED[level].includes(role)) throw new ApiError(403, ACCESS_ERRORS.forbidden[level]);
    return project;
  }

  /** Plans are set by platform administrators, members or not. */
  async requirePlatformAdmin(user: ConsoleUser, orgId: string): Promise<OrganizationEntity> {
    if (!user.platformAdmin) throw new ApiError(403, ACCESS_ERRORS.platformAdminOnly);
    const organization = isUuid(orgId) ? await this.dataSource.getRepository(OrganizationEntity).findOneBy({ id: orgId }) : null;
    if (!organization) throw new ApiError(404, ACCESS_ERRORS.organizationNotFound);
    return organization;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot exist, and must not reach a uuid column. */
export function isUuid(value: string | undefined): value is string {
  return typeof value === 'string' && UUID.test(value);
}
