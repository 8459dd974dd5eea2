import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import type { ProjectApiSettingsEntity } from '../platform/store/project-api-settings.entity.js';
import type { ProjectEntity, ProjectType } from '../platform/store/project.entity.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { ProjectApiSettingsRepository } from '../platform/store/project-api-settings.repository.js';
import { ProjectRepository } from '../platform/store/project.repository.js';

/** Creates a project with the spec's default API settings (external API on, ONE_TIME, ABORT). */
@Injectable()
export class CreateProjectHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly projects: ProjectRepository,
    private readonly apiSettings: ProjectApiSettingsRepository,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { orgId: string; name: string; type: ProjectType }) {
    const created = await this.transactions.run(async ({ manager, emit }) => {
      const now = new Date();
      const project: ProjectEntity = {
        id: randomUUID(),
        orgId: command.orgId,
        name: command.name,
        type: command.type,
        draftDefinition: null,
        draftUpdatedAt: null,
        publishedDefinition: null,
        draftVersion: 0,
        publishedVersion: 0,
        publishedAt: null,
        createdAt: now,
        configVersion: 1,
        deletedAt: null,
      };
      await this.projects.insert(manager, project);
      const settings: ProjectApiSettingsEntity = {
        projectId: project.id,
        externalApiEnabled: true,
        defaultEnrollmentPolicy: 'ONE_TIME',
        defaultOnErrorPolicy: 'ABORT',
        defaultCallbackUrl: null,
        defaultCallbackSecretSealed: null,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
        maxConcurrentRuns: null,
        updatedAt: now,
      };
      await this.apiSettings.insert(manager, settings);
      const events = [gatewayEvents.projectCreated(project), gatewayEvents.projectApiSettingsChanged(project.orgId, settings, project.configVersion)];
      for (const event of events) emit(event);
      return { view: { projectId: project.id, name: project.name, type: project.type }, events };
    });
    await this.propagation.inForce(created.events);
    return created.view;
  }
}
