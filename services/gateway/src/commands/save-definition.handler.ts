import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { validateDefinition } from '@runline/engine';
import { ProjectEntity } from '../entities/project.entity.js';
import { ApiError } from '../http/api-error.js';

/**
 * Saves a project's draft definition after validating it against schema v1. A bad definition
 * is refused with 400 naming the node and the problem; `details` lists every problem found.
 */
@Injectable()
export class SaveDefinitionHandler {
  constructor(private readonly dataSource: DataSource) {}

  async execute(command: { project: ProjectEntity; definition: unknown }) {
    const result = validateDefinition(command.project.type, command.definition);
    if (!result.ok) throw new ApiError(400, result.summary, { details: result.errors });
    const savedAt = new Date();
    await this.dataSource
      .getRepository(ProjectEntity)
      .update({ id: command.project.id }, { draftDefinition: result.definition, draftUpdatedAt: savedAt });
    return {
      projectId: command.project.id,
      draftUpdatedAt: savedAt.toISOString(),
      publishedVersion: command.project.publishedVersion,
    };
  }
}
