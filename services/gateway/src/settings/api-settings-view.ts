import type { ProjectApiSettingsEntity } from '../platform/store/project-api-settings.entity.js';

/** The settings as the console shows them: the callback secret is write-only. */
export function toApiSettingsView(settings: ProjectApiSettingsEntity) {
  return {
    externalApiEnabled: settings.externalApiEnabled,
    defaultEnrollmentPolicy: settings.defaultEnrollmentPolicy,
    defaultOnErrorPolicy: settings.defaultOnErrorPolicy,
    defaultCallbackUrl: settings.defaultCallbackUrl,
    defaultCallbackSecretSet: settings.defaultCallbackSecretSealed !== null,
    rateLimitPerMinute: settings.rateLimitPerMinute,
    rateLimitWindowMs: settings.rateLimitWindowMs,
    maxConcurrentRuns: settings.maxConcurrentRuns,
    updatedAt: settings.updatedAt.toISOString(),
  };
}
