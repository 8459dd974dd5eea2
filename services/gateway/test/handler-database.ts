import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { decodeEnvelope, INVOCATION_REQUEST_SUBJECTS, POLLING_REQUEST_SUBJECTS, SCHEDULER_REQUEST_SUBJECTS, unpackPayloadAs, type EventType } from '@runline/contracts';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import type { GatewayConfig } from '../src/config.js';
import { gatewayService } from '../src/gateway.service.js';
import { AccessDirectory } from '../src/platform/access/access-directory.js';
import { ChangePropagation } from '../src/platform/changes/change-propagation.js';
import { ProjectVersions } from '../src/platform/changes/project-versions.js';
import { RateLimitPolicies } from '../src/platform/rate-limits/rate-limit-policies.js';
import { ApiTokenRepository } from '../src/platform/store/api-token.repository.js';
import type { ProjectEntity } from '../src/platform/store/project.entity.js';
import { ProjectRepository } from '../src/platform/store/project.repository.js';
import { FakeServiceClient, recordingLogger } from './fake-service-client.js';

/** The services that keep copies of gateway data: every committed change is handed to each. */
export const COPY_KEEPERS = [INVOCATION_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE, POLLING_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE, SCHEDULER_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE];

/**
 * A gateway database for handler int-specs: a fresh PostgreSQL database with the gateway's
 * migrations, the gateway's platform parts built on it as the module builds them, the messages
 * each commit wrote to the outbox (`committed`), and fakes of the other services.
 */
export class HandlerDatabase {
  readonly config = { ACCESS_CACHE_TTL_MS: 60_000, CHANGE_PROPAGATION_TIMEOUT_MS: 1000 } as GatewayConfig;
  /** What the commits since the last `reset` wrote to the outbox, in order. */
  committed: BusMessage[] = [];
  dataSource!: DataSource;
  private database!: TestDatabase;

  async open(): Promise<this> {
    this.database = await createTestDatabase();
    await migrateServices([gatewayService], this.database.url);
    this.dataSource = createServiceDataSource({
      url: this.database.url,
      schema: 'gateway',
      migrations: [],
    });
    await this.dataSource.initialize();
    return this;
  }

  async close(): Promise<void> {
    await this.dataSource?.destroy();
    await this.database?.drop();
  }

  reset(): void {
    this.committed = [];
  }

  transactions(): TransactionRunner {
    return new TransactionRunner(this.dataSource, { notify: (messages) => this.committed.push(...(messages ?? [])) });
  }

  projects(): ProjectRepository {
    return new ProjectRepository(this.dataSource, this.transactions());
  }

  directory(projects = this.projects()): AccessDirectory {
    return new AccessDirectory(new ApiTokenRepository(this.dataSource), projects, new ProjectVersions(projects), this.config, new Registry());
  }

  rateLimits(projects = this.projects()): RateLimitPolicies {
    return new RateLimitPolicies(projects, new ProjectVersions(projects), this.config);
  }

  /** ChangePropagation over `services` (see `keepersAnswering`). */
  propagation(services: FakeServiceClient): ChangePropagation {
    return new ChangePropagation(services.asClient(), this.config, recordingLogger().logger);
  }

  async newOrganization(name = 'Org'): Promise<string> {
    const id = randomUUID();
    await this.dataSource.query(`INSERT INTO organizations (id, name) VALUES ($1, $2)`, [id, name]);
    return id;
  }

  /** A project as a fresh row (never published), with its default API settings. */
  async newProject(orgId: string, type: 'CHATBOT' | 'AUTOMATION' = 'CHATBOT'): Promise<ProjectEntity> {
    const id = randomUUID();
    await this.dataSource.query(`INSERT INTO projects (id, org_id, name, type) VALUES ($1, $2, 'project', $3)`, [id, orgId, type]);
    await this.dataSource.query(`INSERT INTO project_api_settings (project_id) VALUES ($1)`, [id]);
    return this.project(id);
  }

  /** The project as its repository reads it, deleted or not. */
  async project(id: string): Promise<ProjectEntity> {
    const [row]: Array<{ org_id: string }> = await this.dataSource.query('SELECT org_id FROM projects WHERE id = $1', [id]);
    const project = row ? await this.projects().findInOrganization(id, row.org_id) : null;
    if (!project) throw new Error(`no project ${id}`);
    return project;
  }

  /** The payload of the `index`th committed message, as `type`. */
  committedPayload<T extends EventType>(index: number, type: T) {
    return unpackPayloadAs(decodeEnvelope(this.committed[index]!.data), type);
  }
}

/** The copy keepers, each storing every change it is handed. */
export function keepersAnswering(): FakeServiceClient {
  const services = new FakeServiceClient();
  for (const subject of COPY_KEEPERS) services.answer(subject, new Uint8Array());
  return services;
}
