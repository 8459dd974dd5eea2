import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One run as clients read it; `document` is the spec's Invocation resource. */
@Entity({ name: 'invocation_views' })
export class InvocationViewEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'project_id' })
  projectId!: string;

  @Column('uuid', { name: 'started_by_token_id', nullable: true })
  startedByTokenId!: string | null;

  @Column('text', { name: 'target_type' })
  targetType!: string;

  @Column('jsonb')
  document!: Record<string, unknown>;

  /** Last event applied; projections skip anything older (idempotent, order-safe). */
  @Column('bigint', { transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  sequence!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
