import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';

export const DEFINITION_STAGES = ['draft', 'published'] as const;
export type DefinitionStage = (typeof DEFINITION_STAGES)[number];

// Ours (the design gives the route, not its refusals).
export const PROJECT_READ_ERRORS = {
  badStage: `stage must be one of: ${DEFINITION_STAGES.join(', ')}`,
  badVersion: 'version must be a positive integer',
  versionNotFound: 'Definition version not found',
} as const;

/** Versions are stored as 0 before the first draft or publish; answers say null. */
const versionOrNull = (version: number): number | null => (version === 0 ? null : version);

/** A project as the console's project list shows it. */
export function projectSummary(project: ProjectEntity) {
  return {
    projectId: project.id,
    name: project.name,
    type: project.type,
    publishedVersion: versionOrNull(project.publishedVersion),
    createdAt: project.createdAt.toISOString(),
  };
}

/** A project as its own page shows it: the list's fields and the draft version. */
export function projectDetail(project: ProjectEntity) {
  const { projectId, name, type, publishedVersion, createdAt } = projectSummary(project);
  return { projectId, name, type, publishedVersion, draftVersion: versionOrNull(project.draftVersion), createdAt };
}

/**
 * One stage of the project's definition. A stage that has nothing yet (no draft saved, nothing
 * published) is not an error: the console opens an empty editor, so it answers
 * `{version: null, definition: null}`.
 */
export function definitionView(project: ProjectEntity, stage: string | undefined) {
  if (stage === 'draft') return { version: versionOrNull(project.draftVersion), definition: project.draftDefinition };
  if (stage === 'published') return { version: versionOrNull(project.publishedVersion), definition: project.publishedDefinition };
  throw new DomainError('invalid', PROJECT_READ_ERRORS.badStage);
}
