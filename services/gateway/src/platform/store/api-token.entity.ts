export const TOKEN_SCOPES = ['bot:invoke', 'flow:trigger', 'automation:trigger'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** An API token (a row of `api_tokens`). Only the SHA-256 of the token is stored; the token itself is shown once. */
export interface ApiTokenEntity {
  id: string;
  orgId: string;
  projectId: string;
  name: string;
  /** The first characters of the token, enough to recognise it in a list. */
  prefix: string;
  tokenHash: string;
  scopes: TokenScope[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  createdBy: string;
  createdAt: Date;
}
