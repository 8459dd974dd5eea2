import { EVENT_TYPES, GATEWAY_EVENT_SUBJECTS, ProjectType } from '@runline/contracts';
import { ProjectApiSettingsRepository } from '../src/platform/store/project-api-settings.repository.js';
import { CreateProjectHandler } from '../src/projects/create-project.handler.js';
import { DeleteProjectHandler } from '../src/projects/delete-project.handler.js';
import { FakeServiceClient } from './fake-service-client.js';
import { COPY_KEEPERS, HandlerDatabase, keepersAnswering } from './handler-database.js';

/** Creating and deleting projects on a real PostgreSQL, with the copy keepers (ApplyGatewayChange) faked. */
describe('project handlers', () => {
  const db = new HandlerDatabase();
  let orgId: string;

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization();
  });
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  describe('CreateProjectHandler', () => {
    it('creates it unpublished with the spec’s default API settings, and hands ProjectCreated then the settings to every copy keeper', async () => {
      const services = keepersAnswering();
      const handler = new CreateProjectHandler(db.transactions(), db.projects(), new ProjectApiSettingsRepository(db.dataSource), db.propagation(services));
      const { projectId, name, type } = await handler.execute({ orgId, name: 'Orders', type: 'AUTOMATION' });
      expect([name, type]).toEqual(['Orders', 'AUTOMATION']);
      expect(await db.project(projectId)).toMatchObject({ orgId, name: 'Orders', type: 'AUTOMATION', draftVersion: 0, publishedVersion: 0, configVersion: 1, deletedAt: null });
      expect(await new ProjectApiSettingsRepository(db.dataSource).of(projectId)).toMatchObject({
        externalApiEnabled: true,
        defaultEnrollmentPolicy: 'ONE_TIME',
        defaultOnErrorPolicy: 'ABORT',
        defaultCallbackUrl: null,
        rateLimitPerMinute: null,
      });
      expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.PROJECT_CREATED, GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED]);
      expect(db.committedPayload(0, EVENT_TYPES.PROJECT_CREATED)).toMatchObject({ orgId, projectId, name: 'Orders', type: ProjectType.AUTOMATION, configVersion: 1n });
      // Both events reach every keeper, in commit order.
      const each = (data: Uint8Array) => COPY_KEEPERS.map(() => data);
      expect(services.calls.map((call) => call.request)).toEqual([...each(db.committed[0]!.data), ...each(db.committed[1]!.data)]);
    });
  });

  describe('DeleteProjectHandler', () => {
    const handlerWith = (services: FakeServiceClient) => {
      const projects = db.projects();
      return new DeleteProjectHandler(db.transactions(), projects, db.directory(projects), db.rateLimits(projects), db.propagation(services));
    };

    it('marks it deleted (the row stays), moves its config version and hands ProjectDeleted to every copy keeper', async () => {
      const project = await db.newProject(orgId);
      const services = keepersAnswering();
      await handlerWith(services).execute({ projectId: project.id });
      const deleted = await db.project(project.id);
      expect(deleted.deletedAt).toBeInstanceOf(Date);
      expect(deleted.configVersion).toBe(project.configVersion + 1);
      expect(db.committedPayload(0, EVENT_TYPES.PROJECT_DELETED)).toMatchObject({ orgId, projectId: project.id, configVersion: BigInt(project.configVersion + 1) });
      expect(services.calls.map((call) => call.subject).sort()).toEqual([...COPY_KEEPERS].sort());
    });

    it('deleting it again (a race of two DELETEs) changes and sends nothing', async () => {
      const project = await db.newProject(orgId);
      await handlerWith(keepersAnswering()).execute({ projectId: project.id });
      db.reset();
      const services = new FakeServiceClient();
      await handlerWith(services).execute({ projectId: project.id });
      expect((await db.project(project.id)).configVersion).toBe(project.configVersion + 1);
      expect(db.committed).toEqual([]);
      expect(services.calls).toEqual([]);
    });
  });
});
