import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MemberRole } from '../entities/membership.entity.js';
import { ApiError } from '../http/api-error.js';

/** Adds a user to an organization with a role (OWNERs only; checked by the caller). */
@Injectable()
export class AddMemberHandler {
  constructor(private readonly dataSource: DataSource) {}

  async execute(command: { orgId: string; userId: string; role: MemberRole }) {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id`,
      [command.orgId, command.userId, command.role],
    );
    if (rows.length === 0) throw new ApiError(409, 'User is already a member of this organization');
    return { orgId: command.orgId, userId: command.userId, role: command.role };
  }
}
