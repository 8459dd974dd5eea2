import { Column, Entity, PrimaryColumn } from 'typeorm';

export const PROJECT_TYPES = ['CHATBOT', 'AUTOMATION'] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

/** A project with its definition: the draft being edited and the last published version. */
@Entity({ name: 'projects' })
export class ProjectEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('text')
  name!: string;

  @Column('text')
  type!: ProjectType;

  @Column('json', { name: 'draft_definition', nullable: true })
  draftDefinition!: object | null;

  @Column('timestamptz', { name: 'draft_updated_at', nullable: true })
  draftUpdatedAt!: Date | null;

  @Column('json', { name: 'published_definition', nullable: true })
  publishedDefinition!: object | null;

  /** Grows by one with every saved draft; 0 before the first. */
  @Column('integer', { name: 'draft_version', default: 0 })
  draftVersion!: number;

  /** The draft version last published; 0 before the first publish. */
  @Column('integer', { name: 'published_version' })
  publishedVersion!: number;

  @Column('timestamptz', { name: 'published_at', nullable: true })
  publishedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  /** Grows with every change that acts on the project (settings, publish, revocation, plan, deletion). */
  @Column('integer', { name: 'config_version', default: 1 })
  configVersion!: number;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}
