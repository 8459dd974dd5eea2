export const ENROLLMENT_POLICIES = ['ONE_TIME', 'EVERY_MATCH'] as const;
export type EnrollmentPolicy = (typeof ENROLLMENT_POLICIES)[number];
export const ON_ERROR_POLICIES = ['ABORT', 'CONTINUE'] as const;
export type OnErrorPolicy = (typeof ON_ERROR_POLICIES)[number];

/** A project's API settings (the spec's "Project API settings"; a row of `project_api_settings`). */
export interface ProjectApiSettingsEntity {
  projectId: string;
  externalApiEnabled: boolean;
  defaultEnrollmentPolicy: EnrollmentPolicy;
  defaultOnErrorPolicy: OnErrorPolicy;
  defaultCallbackUrl: string | null;
  /** Encrypted with the platform secret key (see SecretBox); never returned by the API. */
  defaultCallbackSecretSealed: string | null;
  rateLimitPerMinute: number | null;
  /** A bigint column, read as a number. */
  rateLimitWindowMs: number | null;
  /** RUNNING runs of the project at once, every target together (flow control); null = no limit. */
  maxConcurrentRuns: number | null;
  updatedAt: Date;
}
