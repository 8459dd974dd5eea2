import { Injectable } from '@nestjs/common';
import { DEFINITION_SCHEMA_V1, GRAPHS_BY_PROJECT_TYPE, STARTER_DEFINITIONS } from '@runline/engine';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { DefinitionVersionRepository } from './definition-version.repository.js';
import { PROJECT_READ_ERRORS } from './project-views.js';

/**
 * The console's reads of a definition beyond its two stages: the published versions (who,
 * when), one version's document (the graph a run used), and the JSON schema the editor
 * completes and checks with.
 */
@Injectable()
export class DefinitionHistoryHandler {
  constructor(private readonly versions: DefinitionVersionRepository) {}

  async history(project: ProjectEntity) {
    const rows = await this.versions.history(project.id);
    return { data: rows.map(({ version, publishedBy, publishedAt }) => ({ version, publishedBy, publishedAt: publishedAt.toISOString() })) };
  }

  async version(project: ProjectEntity, raw: string) {
    // Digits only, within int4: anything else is no version number.
    const version = /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : null;
    if (version === null) throw new DomainError('invalid', PROJECT_READ_ERRORS.badVersion);
    const found = await this.versions.find(project.id, version);
    if (!found) throw new DomainError('not-found', PROJECT_READ_ERRORS.versionNotFound);
    return { version: found.version, definition: found.definition, publishedBy: found.publishedBy, publishedAt: found.publishedAt.toISOString() };
  }

  /**
   * The schema (structure only; the save checks references and expressions too), the graphs
   * the project's type takes, and the starter definition the console offers a project without one.
   */
  schema(project: ProjectEntity) {
    const graphs = GRAPHS_BY_PROJECT_TYPE[project.type];
    return { requiredGraphs: graphs.required, optionalGraphs: graphs.optional, starterDefinition: STARTER_DEFINITIONS[project.type], schema: DEFINITION_SCHEMA_V1 };
  }
}
