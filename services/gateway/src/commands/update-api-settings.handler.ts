import { Inject, Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { ChangePropagation } from '../changes/change-propagation.js';
import { nextConfigVersion } from '../changes/config-version.js';
import { ProjectApiSettingsEntity } from '../entities/project-api-settings.entity.js';
import type { ProjectEntity } from '../entities/project.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';
import type { UpdateApiSettingsBody } from '../http/console/console-bodies.dto.js';
import { AccessDirectory } from '../http/external/access-directory.js';
import { RateLimitPolicies } from '../http/external/rate-limits/rate-limit-policies.js';
import { toApiSettingsView } from '../queries/get-api-settings.handler.js';

/** Changes a project's API settings; in force for the next request everywhere once answered. */
@Injectable()
export class UpdateApiSettingsHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly directory: AccessDirectory,
    private readonly rateLimits: RateLimitPolicies,
    private readonly propagation: ChangePropagation,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  async execute(command: { project: ProjectEntity; changes: UpdateApiSettingsBody }) {
    const { changes } = command;
    const changed = await this.transactions.run(async ({ manager, emit }) => {
      const settings = await manager.findOneOrFail(ProjectApiSettingsEntity, {
        where: { projectId: command.project.id },
        lock: { mode: 'pessimistic_write' },
      });
      if (changes.externalApiEnabled !== undefined) settings.externalApiEnabled = changes.externalApiEnabled;
      if (changes.defaultEnrollmentPolicy !== undefined) settings.defaultEnrollmentPolicy = changes.defaultEnrollmentPolicy;
      if (changes.defaultOnErrorPolicy !== undefined) settings.defaultOnErrorPolicy = changes.defaultOnErrorPolicy;
      if (changes.defaultCallbackUrl !== undefined) settings.defaultCallbackUrl = changes.defaultCallbackUrl;
      if (changes.defaultCallbackSecret !== undefined) {
        settings.defaultCallbackSecretSealed = changes.defaultCallbackSecret === null ? null : this.secrets.seal(changes.defaultCallbackSecret);
      }
      if (changes.rateLimitPerMinute !== undefined) settings.rateLimitPerMinute = changes.rateLimitPerMinute;
      if (changes.rateLimitWindowMs !== undefined) settings.rateLimitWindowMs = changes.rateLimitWindowMs;
      settings.updatedAt = new Date();
      await manager.save(ProjectApiSettingsEntity, settings);
      const event = gatewayEvents.projectApiSettingsChanged(command.project.orgId, settings, await nextConfigVersion(manager, command.project.id));
      emit(event);
      return { view: toApiSettingsView(settings), event };
    });
    this.directory.evictProject(command.project.id);
    this.rateLimits.evictProject(command.project.id);
    await this.propagation.inForce([changed.event]);
    return changed.view;
  }
}
