import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One delivery attempt (migration 1763700000301). */
@Entity({ name: 'callback_attempts' })
export class CallbackAttemptEntity {
  @PrimaryColumn('uuid', { name: 'delivery_id' })
  deliveryId!: string;

  @PrimaryColumn('integer')
  attempt!: number;

  @Column('timestamptz', { name: 'attempted_at' })
  attemptedAt!: Date;

  @Column('integer', { name: 'duration_ms' })
  durationMs!: number;

  @Column('text')
  outcome!: string;

  @Column('integer', { name: 'status_code', nullable: true })
  statusCode!: number | null;

  @Column('text', { nullable: true })
  error!: string | null;
}
