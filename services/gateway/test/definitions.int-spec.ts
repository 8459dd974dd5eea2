import { EVENT_TYPES, GATEWAY_EVENT_SUBJECTS } from '@runline/contracts';
import { CHANGE_NOT_YET_APPLIED } from '../src/platform/changes/change-propagation.js';
import { DomainError } from '../src/platform/errors/domain-error.js';
import { DefinitionVersionRepository } from '../src/projects/definition-version.repository.js';
import { PublishDefinitionHandler } from '../src/projects/publish-definition.handler.js';
import { SaveDefinitionHandler } from '../src/projects/save-definition.handler.js';
import { FakeServiceClient } from './fake-service-client.js';
import { COPY_KEEPERS as KEEPERS, HandlerDatabase, keepersAnswering as keepersAnswer } from './handler-database.js';

const AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true }" } },
  },
};

/**
 * Saving and publishing a definition on a real PostgreSQL (the draft, its versions, the
 * published copy, the outbox), with the services that keep copies (ApplyGatewayChange) faked.
 */
describe('definition handlers', () => {
  const db = new HandlerDatabase();
  let orgId: string;

  const newProject = () => db.newProject(orgId, 'AUTOMATION');
  const reread = (id: string) => db.project(id);
  const saver = () => new SaveDefinitionHandler(db.projects());
  const publisher = (services: FakeServiceClient) => {
    const projects = db.projects();
    return new PublishDefinitionHandler(db.transactions(), projects, db.directory(projects), db.propagation(services), new DefinitionVersionRepository(db.dataSource));
  };
  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof DomainError) return { kind: error.kind, message: error.message };
      throw error;
    }
    throw new Error('expected a refusal');
  };

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization('Definitions');
  });
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  describe('SaveDefinitionHandler', () => {
    it('saves a valid definition as the next draft version, and publishes nothing', async () => {
      const project = await newProject();
      const first = await saver().execute({ project, definition: AUTOMATION });
      const second = await saver().execute({ project, definition: AUTOMATION });
      expect(first).toMatchObject({ projectId: project.id, draftVersion: 1, publishedVersion: null });
      expect(second.draftVersion).toBe(2);
      const stored = await reread(project.id);
      expect(stored.draftDefinition).toEqual(AUTOMATION);
      expect(stored.publishedDefinition).toBeNull();
      expect(stored.configVersion).toBe(project.configVersion);
      expect(db.committed).toEqual([]);
    });

    it('refuses a definition that does not validate, naming the problems, and keeps the draft it had', async () => {
      const project = await newProject();
      await saver().execute({ project, definition: AUTOMATION });
      const refused = await refusal(saver().execute({ project, definition: { schemaVersion: 1, workflow: { start: 'missing', nodes: {} } } }));
      expect(refused.kind).toBe('invalid');
      expect(refused.message).not.toBe('');
      expect((await reread(project.id)).draftDefinition).toEqual(AUTOMATION);
    });
  });

  describe('PublishDefinitionHandler', () => {
    it('publishes the draft under its draft version, moves the config version, and hands DefinitionPublished to every copy keeper', async () => {
      const project = await newProject();
      await saver().execute({ project, definition: AUTOMATION });
      await saver().execute({ project, definition: AUTOMATION });
      const services = keepersAnswer();
      expect(await publisher(services).execute({ projectId: project.id, publishedBy: 'user-1' })).toEqual({ publishedVersion: 2 });
      const stored = await reread(project.id);
      expect(stored).toMatchObject({ publishedVersion: 2, publishedDefinition: AUTOMATION, configVersion: project.configVersion + 1 });
      expect(stored.publishedAt).toBeInstanceOf(Date);
      expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.DEFINITION_PUBLISHED]);
      const event = db.committedPayload(0, EVENT_TYPES.DEFINITION_PUBLISHED);
      expect(event).toMatchObject({ orgId, projectId: project.id, version: 2, configVersion: BigInt(project.configVersion + 1) });
      expect(JSON.parse(event.definitionJson)).toEqual(AUTOMATION);
      expect(services.calls.map((call) => call.subject).sort()).toEqual([...KEEPERS].sort());
    });

    it('publishing an unchanged draft again publishes the same version', async () => {
      const project = await newProject();
      await saver().execute({ project, definition: AUTOMATION });
      await publisher(keepersAnswer()).execute({ projectId: project.id, publishedBy: 'user-1' });
      expect(await publisher(keepersAnswer()).execute({ projectId: project.id, publishedBy: 'user-1' })).toEqual({ publishedVersion: 1 });
    });

    it('keeps each published version with who published it; publishing the same version again keeps its first record', async () => {
      const project = await newProject();
      const versions = new DefinitionVersionRepository(db.dataSource);
      await saver().execute({ project, definition: AUTOMATION });
      await publisher(keepersAnswer()).execute({ projectId: project.id, publishedBy: 'alice' });
      await publisher(keepersAnswer()).execute({ projectId: project.id, publishedBy: 'bob' });
      const changed = { ...AUTOMATION, workflow: { ...AUTOMATION.workflow, nodes: { n1: { type: 'return', value: "{ 'ok': false }" } } } };
      await saver().execute({ project, definition: changed });
      await publisher(keepersAnswer()).execute({ projectId: project.id, publishedBy: 'bob' });
      expect((await versions.history(project.id)).map(({ version, publishedBy }) => ({ version, publishedBy }))).toEqual([
        { version: 2, publishedBy: 'bob' },
        { version: 1, publishedBy: 'alice' },
      ]);
      expect((await versions.find(project.id, 1))?.definition).toEqual(AUTOMATION);
      expect((await versions.find(project.id, 2))?.definition).toEqual(changed);
      expect(await versions.find(project.id, 3)).toBeNull();
    });

    it('no draft: conflict, nothing written or sent', async () => {
      const project = await newProject();
      const services = new FakeServiceClient();
      expect(await refusal(publisher(services).execute({ projectId: project.id, publishedBy: 'user-1' }))).toEqual({ kind: 'conflict', message: 'There is no draft definition to publish' });
      expect((await reread(project.id)).configVersion).toBe(project.configVersion);
      expect(db.committed).toEqual([]);
      expect(services.calls).toEqual([]);
    });

    it('a copy keeper silent: the publication stands, the answer is 503', async () => {
      const project = await newProject();
      await saver().execute({ project, definition: AUTOMATION });
      const services = new FakeServiceClient().answer(KEEPERS[0]!, 'silent').answer(KEEPERS[1]!, new Uint8Array());
      expect(await refusal(publisher(services).execute({ projectId: project.id, publishedBy: 'user-1' }))).toEqual({ kind: 'unavailable', message: CHANGE_NOT_YET_APPLIED });
      expect((await reread(project.id)).publishedVersion).toBe(1);
    });
  });
});
