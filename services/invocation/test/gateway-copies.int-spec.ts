import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  ApiTokenRevokedSchema,
  create,
  DefinitionPublishedSchema,
  EnrollmentPolicy,
  EVENT_TYPES,
  InboundHookRevokedSchema,
  newEnvelope,
  OnErrorPolicy,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectDeletedSchema,
  type Envelope,
} from '@runline/contracts';
import { createServiceDataSource } from '@runline/db';
import { migrateServices, SecretBox } from '@runline/runtime';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@runline/testing';
import type { InvocationConfig } from '../src/config.js';
import { GatewayCopies } from '../src/runs/gateway-copies.repository.js';
import { invocationService } from '../src/invocation.service.js';
import { DefinitionCatalog, StaleProjectCopyError } from '../src/runs/definition-catalog.js';

/**
 * The invocation service's copies of gateway data, given events in any order and any number
 * of times: newer state is never overwritten by older, and each event applies once.
 */
describe('gateway copies', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let copies: GatewayCopies;
  const orgId = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([invocationService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', migrations: [] });
    await dataSource.initialize();
    copies = new GatewayCopies(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const settings = (projectId: string, configVersion: number, externalApiEnabled: boolean): Envelope =>
    newEnvelope({
      type: EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED,
      payload: create(ProjectApiSettingsChangedSchema, {
        orgId,
        projectId,
        externalApiEnabled,
        defaultEnrollmentPolicy: EnrollmentPolicy.ONE_TIME,
        defaultOnErrorPolicy: configVersion % 2 === 0 ? OnErrorPolicy.CONTINUE : OnErrorPolicy.ABORT,
        configVersion: BigInt(configVersion),
      }),
      orgId,
      projectId,
    });
  const published = (projectId: string, version: number, configVersion: number): Envelope =>
    newEnvelope({
      type: EVENT_TYPES.DEFINITION_PUBLISHED,
      payload: create(DefinitionPublishedSchema, { orgId, projectId, version, definitionJson: JSON.stringify({ v: version }), configVersion: BigInt(configVersion) }),
      orgId,
      projectId,
    });
  const deleted = (projectId: string, configVersion: number): Envelope =>
    newEnvelope({ type: EVENT_TYPES.PROJECT_DELETED, payload: create(ProjectDeletedSchema, { orgId, projectId, configVersion: BigInt(configVersion) }), orgId, projectId });
  const revoked = (projectId: string, configVersion: number): Envelope =>
    newEnvelope({
      type: EVENT_TYPES.API_TOKEN_REVOKED,
      payload: create(ApiTokenRevokedSchema, { orgId, projectId, tokenId: randomUUID(), configVersion: BigInt(configVersion) }),
      orgId,
      projectId,
    });
  const hookRevoked = (projectId: string, configVersion: number): Envelope =>
    newEnvelope({
      type: EVENT_TYPES.INBOUND_HOOK_REVOKED,
      payload: create(InboundHookRevokedSchema, { orgId, projectId, hookId: randomUUID(), configVersion: BigInt(configVersion) }),
      orgId,
      projectId,
    });
  const plan = (monthlyQuota: number, planVersion: number): Envelope =>
    newEnvelope({
      type: EVENT_TYPES.ORGANIZATION_PLAN_CHANGED,
      payload: create(OrganizationPlanChangedSchema, { orgId, monthlyQuota: BigInt(monthlyQuota), planVersion: BigInt(planVersion) }),
      orgId,
    });
  const copyOf = async (projectId: string) =>
    (
      await dataSource.query(
        `SELECT external_api_enabled, default_on_error_policy, published_version, config_version, settings_version, deleted
           FROM project_copies WHERE project_id = $1`,
        [projectId],
      )
    )[0];

  it('given settings v3, when settings v2 arrive late, then v3 stays', async () => {
    const projectId = randomUUID();
    expect(await copies.apply(settings(projectId, 3, false))).toBe(3);
    await copies.apply(settings(projectId, 2, true));
    expect(await copyOf(projectId)).toMatchObject({ external_api_enabled: false, default_on_error_policy: 'ABORT', settings_version: 3, config_version: 3 });
  });

  it('given a publish at config 2, when settings at config 1 arrive later, then both are kept and the copy is at 2', async () => {
    const projectId = randomUUID();
    await copies.apply(published(projectId, 1, 2));
    await copies.apply(settings(projectId, 1, false));
    expect(await copyOf(projectId)).toMatchObject({ published_version: 1, external_api_enabled: false, settings_version: 1, config_version: 2 });
  });

  it('given an event applied, when the same event comes again, then it applies once', async () => {
    const projectId = randomUUID();
    const first = settings(projectId, 4, false);
    await copies.apply(first);
    await copies.apply(settings(projectId, 5, true));
    await copies.apply(first);
    expect(await copyOf(projectId)).toMatchObject({ external_api_enabled: true, settings_version: 5 });
    const inbox = await dataSource.query(`SELECT count(*)::int AS n FROM inbox WHERE message_id = $1`, [first.id]);
    expect(inbox[0].n).toBe(1);
  });

  it('given a deletion, when older settings arrive, then the project stays deleted', async () => {
    const projectId = randomUUID();
    await copies.apply(settings(projectId, 1, true));
    await copies.apply(deleted(projectId, 3));
    await copies.apply(settings(projectId, 2, true));
    expect(await copyOf(projectId)).toMatchObject({ deleted: true, config_version: 3 });
  });

  it('given a copy, when a token is revoked, then only the config version moves', async () => {
    const projectId = randomUUID();
    await copies.apply(settings(projectId, 1, true));
    await copies.apply(revoked(projectId, 2));
    expect(await copyOf(projectId)).toMatchObject({ external_api_enabled: true, settings_version: 1, config_version: 2, deleted: false });
  });

  it('given a copy, when an inbound hook is revoked, then only the config version moves, once however often it comes', async () => {
    const projectId = randomUUID();
    await copies.apply(settings(projectId, 1, true));
    const event = hookRevoked(projectId, 2);
    expect(await copies.apply(event)).toBe(2);
    await copies.apply(event);
    expect(await copyOf(projectId)).toMatchObject({ external_api_enabled: true, settings_version: 1, config_version: 2, deleted: false });
  });

  it('given plan 2, when plan 1 arrives late, then plan 2 stays', async () => {
    await copies.apply(plan(500, 2));
    await copies.apply(plan(100, 1));
    const [row] = await dataSource.query(`SELECT monthly_quota, plan_version FROM organization_copies WHERE org_id = $1`, [orgId]);
    expect({ quota: Number(row.monthly_quota), version: row.plan_version }).toEqual({ quota: 500, version: 2 });
  });

  describe('the catalog', () => {
    const catalog = () =>
      new DefinitionCatalog(dataSource, { DEFINITION_WAIT_MS: 100 } as InvocationConfig, new SecretBox(TEST_SECRETS_KEY));

    it('given a copy at config 3, when a request knew config 4, then it waits and refuses as stale', async () => {
      const projectId = randomUUID();
      await copies.apply(settings(projectId, 3, true));
      await expect(catalog().project(projectId, { configVersion: 4 })).rejects.toBeInstanceOf(StaleProjectCopyError);
    });

    it('given a copy held in memory, when a newer change is stored, then a request that knew it reads the copy again', async () => {
      const projectId = randomUUID();
      await copies.apply(settings(projectId, 1, true));
      const held = catalog();
      expect(await held.project(projectId, { configVersion: 1 })).toMatchObject({ externalApiEnabled: true, configVersion: 1 });
      await copies.apply(settings(projectId, 2, false));
      expect(await held.project(projectId, { configVersion: 1 })).toMatchObject({ externalApiEnabled: true });
      expect(await held.project(projectId, { configVersion: 2 })).toMatchObject({ externalApiEnabled: false, configVersion: 2 });
      await copies.apply(deleted(projectId, 3));
      expect(await held.project(projectId, { fresh: true })).toMatchObject({ deleted: true, configVersion: 3 });
    });
  });
});
