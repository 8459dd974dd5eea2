import { Column, Entity, PrimaryColumn } from 'typeorm';

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** One run-finished callback, as the callback service keeps it (migration 1763700000301). */
@Entity({ name: 'callback_deliveries' })
export class CallbackDeliveryEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'invocation_id' })
  invocationId!: string;

  @Column('text', { name: 'org_id' })
  orgId!: string;

  @Column('text', { name: 'project_id' })
  projectId!: string;

  @Column('text')
  url!: string;

  @Column('text', { name: 'sealed_secret', nullable: true })
  sealedSecret!: string | null;

  @Column('bytea')
  body!: Buffer;

  @Column('text', { name: 'run_status' })
  runStatus!: string;

  @Column('text')
  status!: DeliveryStatus;

  @Column('integer', { name: 'attempts_made' })
  attemptsMade!: number;

  @Column('timestamptz', { name: 'next_attempt_at', nullable: true })
  nextAttemptAt!: Date | null;

  @Column('text', { name: 'correlation_id', nullable: true })
  correlationId!: string | null;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt!: Date | null;
}
