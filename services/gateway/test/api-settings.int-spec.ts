import { EVENT_TYPES, GATEWAY_EVENT_SUBJECTS } from '@runline/contracts';
import { SecretBox } from '@runline/runtime';
import { CHANGE_NOT_YET_APPLIED } from '../src/platform/changes/change-propagation.js';
import { DomainError } from '../src/platform/errors/domain-error.js';
import { ProjectApiSettingsRepository } from '../src/platform/store/project-api-settings.repository.js';
import { UpdateApiSettingsHandler } from '../src/settings/update-api-settings.handler.js';
import { FakeServiceClient } from './fake-service-client.js';
import { COPY_KEEPERS as KEEPERS, HandlerDatabase, keepersAnswering as keepersAnswer } from './handler-database.js';

/**
 * Changing a project's API settings on a real PostgreSQL (the settings row, the config version,
 * the outbox), with the services that keep copies (ApplyGatewayChange) faked.
 */
describe('UpdateApiSettingsHandler', () => {
  const db = new HandlerDatabase();
  let orgId: string;
  const secrets = new SecretBox('a test key for the api settings spec');

  const newProject = () => db.newProject(orgId);
  const stored = (projectId: string) => new ProjectApiSettingsRepository(db.dataSource).of(projectId);
  const configVersionOf = async (projectId: string) => (await db.project(projectId)).configVersion;
  const handlerWith = (services: FakeServiceClient) => {
    const projects = db.projects();
    return new UpdateApiSettingsHandler(
      db.transactions(),
      projects,
      new ProjectApiSettingsRepository(db.dataSource),
      db.directory(projects),
      db.rateLimits(projects),
      db.propagation(services),
      secrets,
    );
  };

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization('Settings');
  });
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  it('changes only the fields given, seals the secret, moves the config version and hands the change to every copy keeper', async () => {
    const project = await newProject();
    const before = await configVersionOf(project.id);
    const services = keepersAnswer();
    const view = await handlerWith(services).execute({
      project,
      changes: { externalApiEnabled: false, defaultCallbackUrl: 'https://example.com/cb', defaultCallbackSecret: 'shh', rateLimitPerMinute: 30 },
    });
    expect(view).toMatchObject({
      externalApiEnabled: false,
      defaultEnrollmentPolicy: 'ONE_TIME',
      defaultOnErrorPolicy: 'ABORT',
      defaultCallbackUrl: 'https://example.com/cb',
      defaultCallbackSecretSet: true,
      rateLimitPerMinute: 30,
      rateLimitWindowMs: null,
    });
    expect(JSON.stringify(view)).not.toContain('shh');
    const row = await stored(project.id);
    expect(row.defaultCallbackSecretSealed).not.toBe('shh');
    expect(secrets.open(row.defaultCallbackSecretSealed!)).toBe('shh');
    expect(await configVersionOf(project.id)).toBe(before + 1);
    expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED]);
    expect(db.committedPayload(0, EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED)).toMatchObject({ orgId, projectId: project.id, configVersion: BigInt(before + 1) });
    expect(services.calls.map((call) => call.subject).sort()).toEqual([...KEEPERS].sort());
  });

  it('null clears the callback and the rate limit; a field left out keeps its value', async () => {
    const project = await newProject();
    await handlerWith(keepersAnswer()).execute({ project, changes: { defaultCallbackUrl: 'https://example.com/cb', defaultCallbackSecret: 'shh', rateLimitPerMinute: 30, defaultOnErrorPolicy: 'CONTINUE' } });
    const view = await handlerWith(keepersAnswer()).execute({ project, changes: { defaultCallbackUrl: null, defaultCallbackSecret: null, rateLimitPerMinute: null } });
    expect(view).toMatchObject({ defaultCallbackUrl: null, defaultCallbackSecretSet: false, rateLimitPerMinute: null, defaultOnErrorPolicy: 'CONTINUE', externalApiEnabled: true });
  });

  it('a copy keeper silent: the change stands, the answer is 503', async () => {
    const project = await newProject();
    const services = new FakeServiceClient().answer(KEEPERS[0]!, new Uint8Array()).answer(KEEPERS[1]!, 'silent');
    const refused = await handlerWith(services).execute({ project, changes: { externalApiEnabled: false } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ kind: 'unavailable', message: CHANGE_NOT_YET_APPLIED });
    expect((await stored(project.id)).externalApiEnabled).toBe(false);
  });
});
