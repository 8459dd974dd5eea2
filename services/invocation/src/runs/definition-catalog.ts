import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '@runline/contracts';
import { GroupCommit } from '@runline/db';
import { compileDefinition, type CompiledDefinition, type Definition, type ProjectType } from '@runline/engine';
import { boundedCache, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { DefinitionUnavailableError, type ProjectDefaults } from '../lifecycle/run-plan.js';

/** A project as the invocation service knows it (its copy of the gateway's data). */
export interface ProjectCopy extends ProjectDefaults {
  projectId: string;
  orgId: string;
  type: ProjectType | null;
  publishedVersion: number;
  /** The gateway's configuration version this copy holds (see `DefinitionCatalog.project`). */
  configVersion: number;
  deleted: boolean;
  /** RUNNING runs of the project at once, every target together (flow control); null = no limit. */
  maxConcurrentRuns: number | null;
}

/**
 * What the caller needs of the copy: at least this configuration version (the one its sender
 * was answered from) and published version; `fresh` reads the database whatever memory holds,
 * for work no request started (a queued or scheduled start), which must see every change
 * answered before it.
 */
export interface ProjectWanted {
  configVersion?: number;
  publishedVersion?: number;
  fresh?: boolean;
}

/** The copy is older than the version the caller was answered from, even after waiting for it. */
export class StaleProjectCopyError extends Error {
  constructor(projectId: string, wanted: number, held: number) {
    super(`the copy of project ${projectId} holds configuration version ${held}, older than ${wanted}`);
  }
}

/** Copies and compiled definitions kept at most each; past it the least recently used goes. */
const CACHE_LIMIT = 1000;
const POLL_MS = 20;
/** Bounds how long an unused copy stays in memory; a newer version is read at once anyway. */
const PROJECT_TTL_MS = 1000;

/**
 * Published definitions, compiled once per version (never per run), and the project settings
 * they run with. The copies come from gateway events, which the gateway hands over before it
 * answers a change; a copy held in memory is used only while it is at least as new as the
 * configuration version the request carries, else it is read again (and, should the change
 * still be on its way, waited for briefly). Reads of concurrent callers share one query
 * (`GroupCommit`: a read that comes while one is under way waits for the next, so it still sees
 * every change committed before it was asked for). A draft sent with a test run is no copy
 * kept here: `compileDraft` (`run-plan.ts`) compiles it for that run alone.
 */
@Injectable()
export class DefinitionCatalog {
  private readonly compiled = boundedCache<string, CompiledDefinition>({ maxEntries: CACHE_LIMIT });
  /** The published version each compiled definition handed out came from (`versionOf`). */
  private readonly versions = new WeakMap<CompiledDefinition, number>();
  private readonly projects = boundedCache<string, ProjectCopy>({ maxEntries: CACHE_LIMIT, ttlMs: PROJECT_TTL_MS });
  private readonly reads = new GroupCommit<string, ProjectCopy | null>((projectIds) => this.readProjects(projectIds), 2);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  /**
   * The project's copy, at least as new as `wanted`; null when the project is unknown here.
   * Throws StaleProjectCopyError when the copy has not reached `wanted.configVersion` in
   * DEFINITION_WAIT_MS.
   */
  async project(projectId: string, wanted: ProjectWanted = {}): Promise<ProjectCopy | null> {
    const configVersion = wanted.configVersion ?? 0;
    const publishedVersion = wanted.publishedVersion ?? 0;
    const cached = this.projects.get(projectId);
    if (!wanted.fresh && cached && isAtLeast(cached, configVersion, publishedVersion)) return cached;
    const deadline = Date.now() + this.config.DEFINITION_WAIT_MS;
    for (;;) {
      const copy = await this.reads.submit(projectId);
      if (copy) this.projects.set(projectId, copy);
      if (copy && isAtLeast(copy, configVersion, publishedVersion)) return copy;
      if (Date.now() >= deadline) {
        if (copy && copy.configVersion < configVersion) throw new StaleProjectCopyError(projectId, configVersion, copy.configVersion);
        return copy;
      }
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
    this.versions.set(compiled, rows[0].published_version);
    this.compiled.set(`${project.projectId}:${rows[0].published_version}`, compiled);
    return compiled;
  }

  /**
   * The published version `compiled` was read as (it may be newer than the copy `published` was
   * asked with: the row is read as it stands); null for a definition not from `published` (a draft).
   */
  versionOf(compiled: CompiledDefinition): number | null {
    return this.versions.get(compiled) ?? null;
  }

  /** The copies of `projectIds` (repeats allowed), in their order; null for a project unknown here. */
  private async readProjects(projectIds: string[]): Promise<Array<ProjectCopy | null>> {
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
      config_version: number;
      deleted: boolean;
      max_concurrent_runs: number | null;
    }> = await this.dataSource.query(
      `SELECT project_id, org_id, type, external_api_enabled, default_enrollment_policy, default_on_error_policy,
              default_callback_url, default_callback_secret_sealed, published_version, config_version, deleted,
              max_concurrent_runs
         FROM project_copies WHERE project_id = ANY($1::uuid[])`,
      // An id that is no uuid is simply unknown, rather than failing the other reads of the batch.
      [[...new Set(projectIds.filter((projectId) => isUuid(projectId)))]],
    );
    const copies = new Map<string, ProjectCopy>();
    for (const row of rows) {
      copies.set(row.project_id, {
        projectId: row.project_id,
        orgId: row.org_id,
        type: row.type,
        publishedVersion: row.published_version,
        configVersion: row.config_version,
        deleted: row.deleted,
        maxConcurrentRuns: row.max_concurrent_runs,
        externalApiEnabled: row.external_api_enabled,
        defaultEnrollmentPolicy: row.default_enrollment_policy,
        defaultOnErrorPolicy: row.default_on_error_policy,
        defaultCallbackUrl: row.default_callback_url,
        defaultCallbackSecret: row.default_callback_secret_sealed ? this.secrets.open(row.default_callback_secret_sealed) : null,
      });
    }
    return projectIds.map((projectId) => copies.get(projectId) ?? null);
  }
}

function isAtLeast(copy: ProjectCopy, configVersion: number, publishedVersion: number): boolean {
  return copy.configVersion >= configVersion && copy.publishedVersion >= publishedVersion;
}
