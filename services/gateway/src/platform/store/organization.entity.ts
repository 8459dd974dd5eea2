import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An organization and its plan (quota and rate limits; null = not set by the plan). */
@Entity({ name: 'organizations' })
export class OrganizationEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  @Column('bigint', { name: 'monthly_quota', nullable: true, transformer: nullableNumber() })
  monthlyQuota!: number | null;

  @Column('integer', { name: 'rate_limit_per_minute', nullable: true })
  rateLimitPerMinute!: number | null;

  @Column('bigint', { name: 'rate_limit_window_ms', nullable: true, transformer: nullableNumber() })
  rateLimitWindowMs!: number | null;

  @Column('smallint', { name: 'renewal_day', nullable: true })
  renewalDay!: number | null;

  /** Grows by one with every plan change; orders the plan copies other services keep. */
  @Column('integer', { name: 'plan_version', default: 0 })
  planVersion!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}

/** pg returns bigint as a string; these values stay far below 2^53. */
export function nullableNumber() {
  return {
    to: (value: number | null) => value,
    from: (value: string | null) => (value === null ? null : Number(value)),
  };
}
