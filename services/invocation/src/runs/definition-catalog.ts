import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { compileDefinition, validateDefinition, type CompiledDefinition, type Definition, type ProjectType } from '@runline/engine';
import { SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { ProjectDefaults } from './run-plan.js';

/** A project as the invocation service knows it (its copy of the gateway's data). */
export interface ProjectCopy extends ProjectDefaults {
  projectId: string;
  orgId: string;
  type: ProjectType | null;
  publishedVersion: number;
}

export class DefinitionUnavailableError extends Error {}

const CACHE_LIMIT = 1000;
const POLL_MS = 20;
/** Project copies are re-read at most this often; a newer published version is waited for anyway. */
const PROJECT_TTL_MS = 1000;

/**
 * Published definitions, compiled once per version (never per run), and the project settings
 * they run with. The copies come from gateway events; a request may arrive a moment before the
 * copy of the version its caller published, so `published` waits for it briefly.
 */
@Injectable()
export class DefinitionCatalog {
  private readonly compiled = new Map<string, CompiledDefinition>();
  private readonly projects = new Map<string, { copy: ProjectCopy; expiresAt: number }>();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  async project(projectId: string, atLeastVersion = 0): Promise<ProjectCopy | null> {
    const cached = this.projects.get(projectId);
    if (cached && cached.expiresAt > Date.now() && cached.copy.publishedVersion >= atLeastVersion) return cached.copy;
    const deadline = Date.now() + this.config.DEFINITION_WAIT_MS;
    for (;;) {
      const copy = await this.readProject(projectId);
      if (copy) {
        if (this.projects.size >= CACHE_LIMIT) this.projects.clear();
        this.projects.set(projectId, { copy, expiresAt: Date.now() + PROJECT_TTL_MS });
      }
      if (copy && copy.publishedVersion >= atLeastVersion) return copy;
      if (Date.now() >= deadline) return copy;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** The compiled published definition of `project`; throws when none is published. */
  async published(project: ProjectCopy): Promise<CompiledDefinition> {
    if (project.publishedVersion === 0) throw new DefinitionUnavailableError('The project has no published definition; publish it first');
    const key = `${project.projectId}:${project.publishedVersion}`;
    const hit = this.compiled.get(key);
    if (hit) return hit;
    const rows: Array<{ published_definition: Definition | null; published_version: number }> = await this.dataSource.query(
      'SELECT published_definition, published_version FROM project_copies WHERE project_id = $1',
      [project.projectId],
    );
    const definition = rows[0]?.published_definition;
    if (!definition) throw new DefinitionUnavailableError('The project has no published definition; publish it first');
    const compiled = compileDefinition(definition);
    if (this.compiled.size >= CACHE_LIMIT) this.compiled.clear();
    this.compiled.set(`${project.projectId}:${rows[0].published_version}`, compiled);
    return compiled;
  }

  /** A draft (automation test run): validated and compiled for this run only. */
  draft(projectType: ProjectType, json: string): CompiledDefinition {
    let document: unknown;
    try {
      document = JSON.parse(json);
    } catch {
      throw new DefinitionUnavailableError('The project has no valid draft definition');
    }
    const validation = validateDefinition(projectType, document);
    if (!validation.ok) throw new DefinitionUnavailableError(`The draft definition is invalid: ${validation.summary}`);
    return validation.compiled;
  }

  private async readProject(projectId: string): Promise<ProjectCopy | null> {
    const rows: Array<{
      project_id: string;
      org_id: string;
      type: ProjectType | null;
      external_api_enabled: boolean;
      default_enrollment_policy: 'ONE_TIME' | 'EVERY_MATCH';
      default_on_error_policy: 'ABORT' | 'CONTINUE';
      default_callback_url: string | null;
      default_callback_secret_sealed: string | null;
      published_version: number;
    }> = await this.dataSource.query(
      `SELECT project_id, org_id, type, external_api_enabled, default_enrollment_policy, default_on_error_policy,
              default_callback_url, default_callback_secret_sealed, published_version
         FROM project_copies WHERE project_id = $1`,
      [projectId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      projectId: row.project_id,
      orgId: row.org_id,
      type: row.type,
      publishedVersion: row.published_version,
      externalApiEnabled: row.external_api_enabled,
      defaultEnrollmentPolicy: row.default_enrollment_policy,
      defaultOnErrorPolicy: row.default_on_error_policy,
      defaultCallbackUrl: row.default_callback_url,
      defaultCallbackSecret: row.default_callback_secret_sealed ? this.secrets.open(row.default_callback_secret_sealed) : null,
    };
  }
}
