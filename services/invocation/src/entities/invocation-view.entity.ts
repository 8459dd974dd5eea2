/** One run as clients read it (a row of `invocation_views`); `document` is the spec's Invocation resource. */
export interface InvocationViewEntity {
  id: string;
  orgId: string;
  projectId: string;
  startedByTokenId: string | null;
  targetType: string;
  /** A `jsonb` column. */
  document: Record<string, unknown>;
  /** Last event applied; projections skip anything older (idempotent, order-safe). A bigint column, read as a number. */
  sequence: number;
  createdAt: Date;
  updatedAt: Date;
}
