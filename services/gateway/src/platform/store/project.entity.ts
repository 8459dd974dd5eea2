export const PROJECT_TYPES = ['CHATBOT', 'AUTOMATION'] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

/** A project with its definition (a row of `projects`): the draft being edited and the last published version. */
export interface ProjectEntity {
  id: string;
  orgId: string;
  name: string;
  type: ProjectType;
  /** A `json` column (not jsonb): the definition keeps its key order. */
  draftDefinition: object | null;
  draftUpdatedAt: Date | null;
  publishedDefinition: object | null;
  /** Grows by one with every saved draft; 0 before the first. */
  draftVersion: number;
  /** The draft version last published; 0 before the first publish. */
  publishedVersion: number;
  publishedAt: Date | null;
  createdAt: Date;
  /** Grows with every change that acts on the project (settings, publish, revocation, plan, deletion). */
  configVersion: number;
  deletedAt: Date | null;
}
