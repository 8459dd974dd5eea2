import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RunEndpoint } from './run-endpoints.js';

/** A saved request body for one of a project's run endpoints (the console's template library). */
@Entity({ name: 'request_templates' })
export class RequestTemplateEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'project_id' })
  projectId!: string;

  @Column('text')
  name!: string;

  @Column('text')
  endpoint!: RunEndpoint;

  /** Never holds a secret: refused when saved (see template-rules.ts). */
  @Column('json')
  body!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
