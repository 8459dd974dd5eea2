import { Column, Entity, PrimaryColumn } from 'typeorm';

export const MEMBER_ROLES = ['OWNER', 'EDITOR', 'VIEWER'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** A user's role in an organization. OWNER and EDITOR have edit access. */
@Entity({ name: 'memberships' })
export class MembershipEntity {
  @PrimaryColumn('uuid', { name: 'org_id' })
  orgId!: string;

  @PrimaryColumn('text', { name: 'user_id' })
  userId!: string;

  @Column('text')
  role!: MemberRole;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
