import { Injectable } from '@nestjs/common';
import { validateDefinition } from '@runline/engine';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ProjectRepository } from '../platform/store/project.repository.js';

/**
 * Saves a project's draft definition after validating it against schema v1, as the next draft
 * version. A bad definition
 * is refused with 400 naming the node and the problem; `details` lists every problem found.
 */
@Injectable()
export class SaveDefinitionHandler {
  constructor(private readonly projects: ProjectRepository) {}

  async execute(command: { project: ProjectEntity; definition: unknown }) {
    const result = validateDefinition(command.project.type, command.definition);
    if (!result.ok) throw new DomainError('invalid', result.summary, { details: result.errors });
    const savedAt = new Date();
    const draftVersion = await this.projects.saveDraft(command.project.id, result.definition, savedAt);
    return {
      projectId: command.project.id,
      draftVersion,
      draftUpdatedAt: savedAt.toISOString(),
      publishedVersion: command.project.publishedVersion === 0 ? null : command.project.publishedVersion,
    };
  }
}
