import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { validateDefinition } from '@runline/engine';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import { AccessDirectory } from '../platform/access/access-directory.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { ProjectRepository } from '../platform/store/project.repository.js';
import { DefinitionVersionRepository } from './definition-version.repository.js';

/**
 * Publishes the draft under its draft version; runs use it from then on. The version is kept
 * in the history (definition_versions) in the same transaction, with who published it.
 */
@Injectable()
export class PublishDefinitionHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly projects: ProjectRepository,
    private readonly directory: AccessDirectory,
    private readonly propagation: ChangePropagation,
    private readonly versions: DefinitionVersionRepository,
  ) {}

  async execute(command: { projectId: string; publishedBy: string }): Promise<{ publishedVersion: number }> {
    const published = await this.transactions.run(async ({ manager, emit }) => {
      // The row lock serialises concurrent publishes, so versions never repeat.
      const project = await this.projects.lockForUpdate(manager, command.projectId);
      if (project.draftDefinition === null) throw new DomainError('conflict', 'There is no draft definition to publish');
      // Validation rules may have tightened since the draft was saved.
      const result = validateDefinition(project.type, project.draftDefinition);
      if (!result.ok) throw new DomainError('invalid', result.summary, { details: result.errors });
      project.publishedDefinition = project.draftDefinition;
      // The number is the draft's: publishing an unchanged draft again publishes the same
      // version (the services holding copies treat it as one they already have).
      project.publishedVersion = project.draftVersion;
      project.publishedAt = new Date();
      project.configVersion += 1;
      await this.projects.savePublished(manager, project);
      await this.versions.record(manager, {
        projectId: project.id,
        version: project.publishedVersion,
        definition: project.publishedDefinition,
        publishedBy: command.publishedBy,
        publishedAt: project.publishedAt,
      });
      const event = gatewayEvents.definitionPublished(project);
      emit(event);
      return { view: { publishedVersion: project.publishedVersion }, event };
    });
    this.directory.evictProject(command.projectId);
    await this.propagation.inForce([published.event]);
    return published.view;
  }
}
