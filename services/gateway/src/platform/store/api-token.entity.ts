import { Column, Entity, PrimaryColumn } from 'typeorm';

export const TOKEN_SCOPES = ['bot:invoke', 'flow:trigger', 'automation:trigger'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** An API token. Only the SHA-256 of the token is stored; the token itself is shown once. */
@Entity({ name: 'api_tokens' })
export class ApiTokenEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'project_id' })
  projectId!: string;

  @Column('text')
  name!: string;

  /** The first characters of the token, enough to recognise it in a list. */
  @Column('text')
  prefix!: string;

  @Column('text', { name: 'token_hash' })
  tokenHash!: string;

  @Column('text', { array: true })
  scopes!: TokenScope[];

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column('text', { name: 'created_by' })
  createdBy!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
