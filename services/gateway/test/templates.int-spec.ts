import { randomUUID } from 'node:crypto';
import { RUN_ENDPOINT_ERRORS } from '../src/templates/run-endpoints.js';
import { CreateTemplateHandler } from '../src/templates/create-template.handler.js';
import { DeleteTemplateHandler } from '../src/templates/delete-template.handler.js';
import { RequestTemplateRepository } from '../src/templates/request-template.repository.js';
import { TEMPLATE_ERRORS, TEMPLATE_LIMITS } from '../src/templates/template-rules.js';
import { UpdateTemplateHandler } from '../src/templates/update-template.handler.js';
import type { ProjectEntity } from '../src/platform/store/project.entity.js';
import { refusalOf } from './fake-service-client.js';
import { HandlerDatabase } from './handler-database.js';

/** The template library's handlers on a real PostgreSQL (they ask no other service). */
describe('template handlers', () => {
  const db = new HandlerDatabase();
  let orgId: string;
  const templates = () => new RequestTemplateRepository(db.dataSource);
  const stored = (projectId: string) => templates().list(projectId);
  const add = (project: ProjectEntity, fields: Partial<{ name: string; endpoint: 'flows.trigger' | 'bots.message' | 'automations.trigger'; body: Record<string, unknown> }> = {}) =>
    new CreateTemplateHandler(templates()).execute({ project, name: 'order', endpoint: 'flows.trigger', body: { orderId: 'o-1' }, ...fields });

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization();
  });
  afterAll(() => db.close());

  describe('CreateTemplateHandler', () => {
    it('adds a template and answers it', async () => {
      const project = await db.newProject(orgId, 'CHATBOT');
      const created = await add(project);
      expect(created).toMatchObject({ id: expect.any(String) as string, name: 'order', endpoint: 'flows.trigger', body: { orderId: 'o-1' } });
      expect((await stored(project.id)).map((template) => [template.id, template.name])).toEqual([[created.id, 'order']]);
    });

    it('refuses an endpoint of another project type, a body holding a secret, and a body too large; nothing is stored', async () => {
      const project = await db.newProject(orgId, 'AUTOMATION');
      expect(await refusalOf(add(project, { endpoint: 'bots.message' }))).toBe(`invalid: ${RUN_ENDPOINT_ERRORS.wrongType('bots.message', 'AUTOMATION')}`);
      expect(await refusalOf(add(project, { endpoint: 'automations.trigger', body: { password: 'hunter2' } }))).toMatch(/^invalid: A template must not hold secrets \(found: body\.password\)/);
      expect(await refusalOf(add(project, { endpoint: 'automations.trigger', body: { text: 'x'.repeat(TEMPLATE_LIMITS.bodyBytes) } }))).toBe(`invalid: ${TEMPLATE_ERRORS.bodyTooLarge}`);
      expect(await stored(project.id)).toEqual([]);
    });

    it('refuses a template past the per-project limit', async () => {
      const project = await db.newProject(orgId, 'CHATBOT');
      for (let i = 0; i < TEMPLATE_LIMITS.perProject; i++) await add(project, { name: `t${i}` });
      expect(await refusalOf(add(project, { name: 'one too many' }))).toBe(`conflict: ${TEMPLATE_ERRORS.tooMany}`);
      expect((await stored(project.id)).length).toBe(TEMPLATE_LIMITS.perProject);
    });
  });

  describe('UpdateTemplateHandler and DeleteTemplateHandler', () => {
    it('replace and remove a template of this project; another project’s, or an unknown id, is not found', async () => {
      const project = await db.newProject(orgId, 'CHATBOT');
      const other = await db.newProject(orgId, 'CHATBOT');
      const { id } = await add(project);
      const update = new UpdateTemplateHandler(templates());
      expect(await update.execute({ project, id, name: 'renamed', endpoint: 'bots.message', body: { text: 'hi' } })).toMatchObject({ id, name: 'renamed', endpoint: 'bots.message', body: { text: 'hi' } });
      expect(await refusalOf(update.execute({ project: other, id, name: 'x', endpoint: 'bots.message', body: {} }))).toBe(`not-found: ${TEMPLATE_ERRORS.notFound}`);
      expect(await refusalOf(update.execute({ project, id, name: 'x', endpoint: 'bots.message', body: { apiKey: 'k' } }))).toMatch(/^invalid: A template must not hold secrets/);

      const remove = new DeleteTemplateHandler(templates());
      expect(await refusalOf(remove.execute({ projectId: other.id, id }))).toBe(`not-found: ${TEMPLATE_ERRORS.notFound}`);
      await remove.execute({ projectId: project.id, id });
      expect(await stored(project.id)).toEqual([]);
      expect(await refusalOf(remove.execute({ projectId: project.id, id }))).toBe(`not-found: ${TEMPLATE_ERRORS.notFound}`);
      expect(await refusalOf(remove.execute({ projectId: project.id, id: randomUUID() }))).toBe(`not-found: ${TEMPLATE_ERRORS.notFound}`);
    });
  });
});
