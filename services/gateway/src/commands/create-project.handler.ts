import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { ProjectApiSettingsEntity } from '../entities/project-api-settings.entity.js';
import { ProjectEntity, type ProjectType } from '../entities/project.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';

/** Creates a project with the spec's default API settings (external API on, ONE_TIME, ABORT). */
@Injectable()
export class CreateProjectHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  execute(command: { orgId: string; name: string; type: ProjectType }) {
    return this.transactions.run(async ({ manager, emit }) => {
      const now = new Date();
      const project = manager.create(ProjectEntity, {
        id: randomUUID(),
        orgId: command.orgId,
        name: command.name,
        type: command.type,
        draftDefinition: null,
        draftUpdatedAt: null,
        publishedDefinition: null,
        publishedVersion: 0,
        publishedAt: null,
        createdAt: now,
        deletedAt: null,
      });
      await manager.insert(ProjectEntity, project);
      const settings = manager.create(ProjectApiSettingsEntity, {
        projectId: project.id,
        externalApiEnabled: true,
        defaultEnrollmentPolicy: 'ONE_TIME',
        defaultOnErrorPolicy: 'ABORT',
        defaultCallbackUrl: null,
        defaultCallbackSecretSealed: null,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
        updatedAt: now,
      });
      await manager.insert(ProjectApiSettingsEntity, settings);
      emit(gatewayEvents.projectCreated(project));
      emit(gatewayEvents.projectApiSettingsChanged(project.orgId, settings));
      return { projectId: project.id, name: project.name, type: project.type };
    });
  }
}
