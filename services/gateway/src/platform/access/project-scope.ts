import type { ProjectEntity, ProjectType } from '../store/project.entity.js';

/**
 * The project a command or query acts for, as both doors see it: the token pipeline's `Caller`
 * (read when the call came in) has these fields, and the console builds one from the project it
 * has just read for the signed-in user (`scopeOfProject`). The versions are what the sender
 * passes on, so the service that acts never uses a state older than the one the client was
 * answered from (DESIGN section 8).
 */
export interface ProjectScope {
  orgId: string;
  projectId: string;
  projectType: ProjectType;
  /** The last published version (0 = never published). */
  publishedVersion: number;
  /** The project's configuration version. */
  configVersion: number;
}

/** The scope of a project read from the database for this request (ConsoleAccess.requireProject). */
export function scopeOfProject(project: Pick<ProjectEntity, 'id' | 'orgId' | 'type' | 'publishedVersion' | 'configVersion'>): ProjectScope {
  return {
    orgId: project.orgId,
    projectId: project.id,
    projectType: project.type,
    publishedVersion: project.publishedVersion,
    configVersion: project.configVersion,
  };
}
