import { Column, Entity, PrimaryColumn } from 'typeorm';
import { nullableNumber } from './organization.entity.js';

export const ENROLLMENT_POLICIES = ['ONE_TIME', 'EVERY_MATCH'] as const;
export type EnrollmentPolicy = (typeof ENROLLMENT_POLICIES)[number];
export const ON_ERROR_POLICIES = ['ABORT', 'CONTINUE'] as const;
export type OnErrorPolicy = (typeof ON_ERROR_POLICIES)[number];

/** A project's API settings (the spec's "Project API settings"). */
@Entity({ name: 'project_api_settings' })
export class ProjectApiSettingsEntity {
  @PrimaryColumn('uuid', { name: 'project_id' })
  projectId!: string;

  @Column('boolean', { name: 'external_api_enabled' })
  externalApiEnabled!: boolean;

  @Column('text', { name: 'default_enrollment_policy' })
  defaultEnrollmentPolicy!: EnrollmentPolicy;

  @Column('text', { name: 'default_on_error_policy' })
  defaultOnErrorPolicy!: OnErrorPolicy;

  @Column('text', { name: 'default_callback_url', nullable: true })
  defaultCallbackUrl!: string | null;

  /** Encrypted with the platform secret key (see SecretBox); never returned by the API. */
  @Column('text', { name: 'default_callback_secret_sealed', nullable: true })
  defaultCallbackSecretSealed!: string | null;

  @Column('integer', { name: 'rate_limit_per_minute', nullable: true })
  rateLimitPerMinute!: number | null;

  @Column('bigint', { name: 'rate_limit_window_ms', nullable: true, transformer: nullableNumber() })
  rateLimitWindowMs!: number | null;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
