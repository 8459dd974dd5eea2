import { Inject, Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { AccessDirectory } from '../platform/access/access-directory.js';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import type { EnrollmentPolicy, OnErrorPolicy } from '../platform/store/project-api-settings.entity.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { toApiSettingsView } from './api-settings-view.js';
import { RateLimitPolicies } from '../platform/rate-limits/rate-limit-policies.js';
import { ProjectApiSettingsRepository } from '../platform/store/project-api-settings.repository.js';
import { ProjectRepository } from '../platform/store/project.repository.js';

/** The settings to change; a field left out keeps its value, null clears it. */
export interface ApiSettingsChanges {
  externalApiEnabled?: boolean;
  defaultEnrollmentPolicy?: EnrollmentPolicy;
  defaultOnErrorPolicy?: OnErrorPolicy;
  defaultCallbackUrl?: string | null;
  /** In clear; sealed before it is stored. */
  defaultCallbackSecret?: string | null;
  rateLimitPerMinute?: number | null;
  rateLimitWindowMs?: number | null;
  maxConcurrentRuns?: number | null;
}

/** Changes a project's API settings; in force for the next request everywhere once answered. */
@Injectable()
export class UpdateApiSettingsHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly projects: ProjectRepository,
    private readonly apiSettings: ProjectApiSettingsRepository,
    private readonly directory: AccessDirectory,
    private readonly rateLimits: RateLimitPolicies,
    private readonly propagation: ChangePropagation,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  async execute(command: { project: ProjectEntity; changes: ApiSettingsChanges }) {
    const { changes } = command;
    const changed = await this.transactions.run(async ({ manager, emit }) => {
      const settings = await this.apiSettings.lockForUpdate(manager, command.project.id);
      if (changes.externalApiEnabled !== undefined) settings.externalApiEnabled = changes.externalApiEnabled;
      if (changes.defaultEnrollmentPolicy !== undefined) settings.defaultEnrollmentPolicy = changes.defaultEnrollmentPolicy;
      if (changes.defaultOnErrorPolicy !== undefined) settings.defaultOnErrorPolicy = changes.defaultOnErrorPolicy;
      if (changes.defaultCallbackUrl !== undefined) settings.defaultCallbackUrl = changes.defaultCallbackUrl;
      if (changes.defaultCallbackSecret !== undefined) {
        settings.defaultCallbackSecretSealed = changes.defaultCallbackSecret === null ? null : this.secrets.seal(changes.defaultCallbackSecret);
      }
      if (changes.rateLimitPerMinute !== undefined) settings.rateLimitPerMinute = changes.rateLimitPerMinute;
      if (changes.rateLimitWindowMs !== undefined) settings.rateLimitWindowMs = changes.rateLimitWindowMs;
      if (changes.maxConcurrentRuns !== undefined) settings.maxConcurrentRuns = changes.maxConcurrentRuns;
      settings.updatedAt = new Date();
      await this.apiSettings.save(manager, settings);
      const event = gatewayEvents.projectApiSettingsChanged(command.project.orgId, settings, await this.projects.nextConfigVersion(manager, command.project.id));
      emit(event);
      return { view: toApiSettingsView(settings), event };
    });
    this.directory.evictProject(command.project.id);
    this.rateLimits.evictProject(command.project.id);
    await this.propagation.inForce([changed.event]);
    return changed.view;
  }
}
