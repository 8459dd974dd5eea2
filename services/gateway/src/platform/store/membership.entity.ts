export const MEMBER_ROLES = ['OWNER', 'EDITOR', 'VIEWER'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** A user's role in an organization (a row of `memberships`). OWNER and EDITOR have edit access. */
export interface MembershipEntity {
  orgId: string;
  userId: string;
  role: MemberRole;
  createdAt: Date;
}
