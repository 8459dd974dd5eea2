import { Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import { validateDefinition } from '@runline/engine';
import { ChangePropagation } from '../changes/change-propagation.js';
import { ProjectEntity } from '../entities/project.entity.js';
import { gatewayEvents } from '../events/gateway-events.js';
import { ApiError } from '../http/api-error.js';
import { AccessDirectory } from '../http/external/access-directory.js';

/** Publishes the draft as the next version; runs use it from then on. */
@Injectable()
export class PublishDefinitionHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly directory: AccessDirectory,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { projectId: string }): Promise<{ publishedVersion: number }> {
    const published = await this.transactions.run(async ({ manager, emit }) => {
      // The row lock serialises concurrent publishes, so versions never repeat.
      const project = await manager.findOneOrFail(ProjectEntity, { where: { id: command.projectId }, lock: { mode: 'pessimistic_write' } });
      if (project.draftDefinition === null) throw new ApiError(409, 'There is no draft definition to publish');
      // Validation rules may have tightened since the draft was saved.
      const result = validateDefinition(project.type, project.draftDefinition);
      if (!result.ok) throw new ApiError(400, result.summary, { details: result.errors });
      project.publishedDefinition = project.draftDefinition;
      project.publishedVersion += 1;
      project.publishedAt = new Date();
      project.configVersion += 1;
      await manager.save(ProjectEntity, project);
      const event = gatewayEvents.definitionPublished(project);
      emit(event);
      return { view: { publishedVersion: project.publishedVersion }, event };
    });
    this.directory.evictProject(command.projectId);
    await this.propagation.inForce([published.event]);
    return published.view;
  }
}
