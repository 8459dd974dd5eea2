import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { create, EVENT_TYPES, InboundHookRevokedSchema, newEnvelope } from '@runline/contracts';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { ProjectCopies } from '../src/events/project-copies.js';
import { applySettings, markDeleted, projectStates, raiseVersion } from '../src/events/project-copies.repository.js';
import { pollingService } from '../src/polling.service.js';

/**
 * The project copies repository on a real PostgreSQL: every change arrives twice and possibly
 * out of order, so each statement only moves a copy forward.
 */
describe('project copies repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const orgId = randomUUID();

  const state = async (projectId: string) => (await projectStates(dataSource.manager, [projectId])).get(projectId) ?? null;
  const stored = async (projectId: string) =>
    (await dataSource.query(`SELECT org_id, external_api_enabled, deleted, config_version, settings_version FROM project_copies WHERE project_id = $1`, [projectId]))[0] as
      | Record<string, unknown>
      | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([pollingService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'polling', migrations: [] });
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('a project no event named yet has no state', async () => {
    expect(await state(randomUUID())).toBeNull();
  });

  it('raiseVersion: a project first heard of is pollable; its version only grows', async () => {
    const projectId = randomUUID();
    await raiseVersion(dataSource.manager, projectId, orgId, 3);
    expect(await state(projectId)).toEqual({ pollable: true, configVersion: 3 });
    await raiseVersion(dataSource.manager, projectId, orgId, 2);
    expect(await state(projectId)).toEqual({ pollable: true, configVersion: 3 });
    await raiseVersion(dataSource.manager, projectId, orgId, 5);
    expect(await stored(projectId)).toEqual({ org_id: orgId, external_api_enabled: true, deleted: false, config_version: 5, settings_version: 0 });
  });

  it('applySettings: newer settings replace older ones, older ones arriving late change nothing', async () => {
    const projectId = randomUUID();
    await applySettings(dataSource.manager, projectId, orgId, false, 4);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 4 });
    // The switch turned on at 6, the off of 5 arriving after it.
    await applySettings(dataSource.manager, projectId, orgId, true, 6);
    await applySettings(dataSource.manager, projectId, orgId, false, 5);
    expect(await state(projectId)).toEqual({ pollable: true, configVersion: 6 });
    // The same change a second time.
    await applySettings(dataSource.manager, projectId, orgId, true, 6);
    expect(await stored(projectId)).toMatchObject({ external_api_enabled: true, settings_version: 6, config_version: 6 });
  });

  it('applySettings over a version raised by other changes: the switch applies, the version does not go back', async () => {
    const projectId = randomUUID();
    await raiseVersion(dataSource.manager, projectId, orgId, 9);
    await applySettings(dataSource.manager, projectId, orgId, false, 7);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 9 });
    expect(await stored(projectId)).toMatchObject({ settings_version: 7 });
    // A version raised later keeps the switch as the settings left it.
    await raiseVersion(dataSource.manager, projectId, orgId, 10);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 10 });
  });

  it('markDeleted: a deleted project is never pollable again, whatever arrives later', async () => {
    const projectId = randomUUID();
    await raiseVersion(dataSource.manager, projectId, orgId, 2);
    await markDeleted(dataSource.manager, projectId, orgId, 4);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 4 });
    await applySettings(dataSource.manager, projectId, orgId, true, 8);
    await raiseVersion(dataSource.manager, projectId, orgId, 9);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 9 });
    await markDeleted(dataSource.manager, projectId, orgId, 3);
    expect(await stored(projectId)).toMatchObject({ deleted: true, config_version: 9 });
  });

  it('an inbound hook revoked moves only the version on, once however often it comes', async () => {
    const projectId = randomUUID();
    const copies = new ProjectCopies(new TransactionRunner(dataSource, { notify: () => undefined }));
    await applySettings(dataSource.manager, projectId, orgId, false, 2);
    const revoked = newEnvelope({
      type: EVENT_TYPES.INBOUND_HOOK_REVOKED,
      payload: create(InboundHookRevokedSchema, { orgId, projectId, hookId: randomUUID(), configVersion: 3n }),
      orgId,
      projectId,
    });
    expect(await copies.apply(revoked)).toBe(3);
    expect(await copies.apply(revoked)).toBe(3);
    expect(await stored(projectId)).toMatchObject({ external_api_enabled: false, settings_version: 2, config_version: 3 });
  });

  it('markDeleted on a project first heard of by its deletion', async () => {
    const projectId = randomUUID();
    await markDeleted(dataSource.manager, projectId, orgId, 1);
    expect(await state(projectId)).toEqual({ pollable: false, configVersion: 1 });
  });
});
