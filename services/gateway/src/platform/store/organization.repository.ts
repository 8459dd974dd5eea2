import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { MembershipEntity, type MemberRole } from './membership.entity.js';
import { OrganizationEntity } from './organization.entity.js';

/** Organizations, their plans and their members. */
@Injectable()
export class OrganizationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A new organization with its creator as OWNER. */
  async insertWithOwner(manager: EntityManager, organization: OrganizationEntity, ownerUserId: string): Promise<void> {
    await manager.insert(OrganizationEntity, organization);
    await manager.insert(MembershipEntity, { orgId: organization.id, userId: ownerUserId, role: 'OWNER', createdAt: organization.createdAt });
  }

  /** The organization, its row locked until the transaction ends. */
  lockForUpdate(manager: EntityManager, id: string): Promise<OrganizationEntity> {
    return manager.findOneOrFail(OrganizationEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async save(manager: EntityManager, organization: OrganizationEntity): Promise<void> {
    await manager.save(OrganizationEntity, organization);
  }

  findById(id: string): Promise<OrganizationEntity | null> {
    return this.dataSource.getRepository(OrganizationEntity).findOneBy({ id });
  }

  /** The user's role in the organization; null when not a member. */
  async roleOf(orgId: string, userId: string): Promise<MemberRole | null> {
    const membership = await this.dataSource.getRepository(MembershipEntity).findOneBy({ orgId, userId });
    return membership?.role ?? null;
  }

  /** The organizations the user is a member of, with the user's role, oldest first. */
  async listForUser(userId: string): Promise<Array<{ orgId: string; name: string; role: MemberRole }>> {
    const rows: Array<{ id: string; name: string; role: MemberRole }> = await this.dataSource.query(
      `SELECT o.id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
        WHERE m.user_id = $1 ORDER BY o.created_at, o.id`,
      [userId],
    );
    return rows.map((row) => ({ orgId: row.id, name: row.name, role: row.role }));
  }

  /** Adds the member; false when the user already is one (whatever the role). */
  async addMember(orgId: string, userId: string, role: MemberRole): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id`,
      [orgId, userId, role],
    );
    return rows.length > 0;
  }
}
