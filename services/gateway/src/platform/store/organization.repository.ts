import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { MemberRole } from './membership.entity.js';
import type { OrganizationEntity } from './organization.entity.js';

interface RawOrganization {
  id: string;
  name: string;
  /** bigint: pg answers a string. */
  monthly_quota: string | null;
  rate_limit_per_minute: number | null;
  /** bigint: pg answers a string. */
  rate_limit_window_ms: string | null;
  renewal_day: number | null;
  plan_version: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, name, monthly_quota, rate_limit_per_minute, rate_limit_window_ms, renewal_day, plan_version, created_at, updated_at';

/** Organizations, their plans and their members. */
@Injectable()
export class OrganizationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A new organization with its creator as OWNER. */
  async insertWithOwner(manager: EntityManager, organization: OrganizationEntity, ownerUserId: string): Promise<void> {
    await manager.query(`INSERT INTO organizations (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      organization.id,
      organization.name,
      organization.monthlyQuota,
      organization.rateLimitPerMinute,
      organization.rateLimitWindowMs,
      organization.renewalDay,
      organization.planVersion,
      organization.createdAt,
      organization.updatedAt,
    ]);
    await manager.query(`INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, 'OWNER', $3)`, [organization.id, ownerUserId, organization.createdAt]);
  }

  /** The organization, its row locked until the transaction ends. */
  async lockForUpdate(manager: EntityManager, id: string): Promise<OrganizationEntity> {
    const [row]: RawOrganization[] = await manager.query(`SELECT ${COLUMNS} FROM organizations WHERE id = $1 FOR UPDATE`, [id]);
    if (!row) throw new Error(`organization ${id} does not exist`);
    return organizationOf(row);
  }

  /** Writes the plan, its version and updated_at of the organization the caller locked. */
  async savePlan(manager: EntityManager, organization: OrganizationEntity): Promise<void> {
    await manager.query(
      `UPDATE organizations
          SET monthly_quota = $2, rate_limit_per_minute = $3, rate_limit_window_ms = $4, renewal_day = $5, plan_version = $6, updated_at = $7
        WHERE id = $1`,
      [
        organization.id,
        organization.monthlyQuota,
        organization.rateLimitPerMinute,
        organization.rateLimitWindowMs,
        organization.renewalDay,
        organization.planVersion,
        organization.updatedAt,
      ],
    );
  }

  async findById(id: string): Promise<OrganizationEntity | null> {
    const [row]: RawOrganization[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
    return row ? organizationOf(row) : null;
  }

  /** The user's role in the organization; null when not a member. */
  async roleOf(orgId: string, userId: string): Promise<MemberRole | null> {
    const [row]: Array<{ role: MemberRole }> = await this.dataSource.query('SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId]);
    return row?.role ?? null;
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

function organizationOf(row: RawOrganization): OrganizationEntity {
  return {
    id: row.id,
    name: row.name,
    monthlyQuota: numberOrNull(row.monthly_quota),
    rateLimitPerMinute: row.rate_limit_per_minute,
    rateLimitWindowMs: numberOrNull(row.rate_limit_window_ms),
    renewalDay: row.renewal_day,
    planVersion: row.plan_version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** pg returns bigint as a string; these values stay far below 2^53. */
function numberOrNull(value: string | null): number | null {
  return value === null ? null : Number(value);
}
