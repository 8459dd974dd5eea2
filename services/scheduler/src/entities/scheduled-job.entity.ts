import { Column, Entity, PrimaryColumn } from 'typeorm';

export const JOB_STATUSES = ['SCHEDULED', 'FIRED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_KIND_NAMES = ['START_RUN', 'RESUME_RUN', 'RETRY_RUN'] as const;
export type JobKindName = (typeof JOB_KIND_NAMES)[number];

/** One job, as the scheduler keeps it (migration 1763700000201). */
@Entity({ name: 'scheduled_jobs' })
export class ScheduledJobEntity {
  @PrimaryColumn('text')
  name!: string;

  @Column('text')
  kind!: JobKindName;

  @Column('uuid', { name: 'invocation_id' })
  invocationId!: string;

  @Column('uuid', { name: 'org_id' })
  orgId!: string;

  @Column('uuid', { name: 'project_id' })
  projectId!: string;

  /** Null only for a tombstone (cancelled before its ScheduleJob arrived). */
  @Column('timestamptz', { name: 'due_at', nullable: true })
  dueAt!: Date | null;

  @Column('text')
  status!: JobStatus;

  @Column('text', { name: 'correlation_id', nullable: true })
  correlationId!: string | null;

  @Column('text', { name: 'causation_id', nullable: true })
  causationId!: string | null;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'fired_at', nullable: true })
  firedAt!: Date | null;

  @Column('timestamptz', { name: 'cancelled_at', nullable: true })
  cancelledAt!: Date | null;
}
