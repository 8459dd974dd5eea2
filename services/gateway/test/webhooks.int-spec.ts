import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import {
  create,
  CreateInboundHookReplySchema,
  CreateInboundHookRequestSchema,
  EVENT_TYPES,
  fromBinary,
  GATEWAY_EVENT_SUBJECTS,
  RevokeHookOutcome,
  RevokeInboundHookReplySchema,
  RevokeInboundHookRequestSchema,
  timestampFromDate,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { CreateWebhookHandler } from '../src/hooks/create-webhook.handler.js';
import { HookDirectory } from '../src/hooks/hook-directory.js';
import { RevokeWebhookHandler } from '../src/hooks/revoke-webhook.handler.js';
import { ProjectVersions } from '../src/platform/changes/project-versions.js';
import { HOOK_MESSAGES } from '../src/hooks/hook-messages.js';
import { SERVICE_UNAVAILABLE } from '../src/platform/service-client/service-client.js';
import { FakeServiceClient, refusalOf } from './fake-service-client.js';
import { COPY_KEEPERS, HandlerDatabase, keepersAnswering } from './handler-database.js';

const CREATE = WEBHOOK_REQUEST_SUBJECTS.CREATE_INBOUND_HOOK;
const REVOKE = WEBHOOK_REQUEST_SUBJECTS.REVOKE_INBOUND_HOOK;

/**
 * Creating and revoking inbound hooks: the webhook service (faked) keeps the hooks; revoking moves
 * the project's config version on a real PostgreSQL so every replica's copy of the hook goes stale.
 */
describe('inbound hook handlers', () => {
  const db = new HandlerDatabase();
  let orgId: string;
  const hooksOf = (services: FakeServiceClient) => new HookDirectory(services.asClient(), new ProjectVersions(db.projects()), db.config, new Registry());

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization();
  });
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  describe('CreateWebhookHandler', () => {
    it('asks the webhook service to create it, and answers its URL and secret (shown this once)', async () => {
      const project = await db.newProject(orgId);
      const hookId = randomUUID();
      const createdAt = new Date('2030-01-01T00:00:00.000Z');
      const services = new FakeServiceClient().answer(
        CREATE,
        toBinary(
          CreateInboundHookReplySchema,
          create(CreateInboundHookReplySchema, { hook: { id: hookId, name: 'orders', status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: timestampFromDate(createdAt) }, secret: 'whsec_1' }),
        ),
      );
      const answer = await new CreateWebhookHandler(services.asClient(), hooksOf(services)).execute({ project, name: 'orders', rateLimitPerMinute: 600, baseUrl: 'https://gw.example' });
      expect(answer).toEqual({ id: hookId, name: 'orders', url: `https://gw.example/v1/hooks/${hookId}`, secret: 'whsec_1', status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: createdAt.toISOString() });
      expect(fromBinary(CreateInboundHookRequestSchema, services.callsTo(CREATE)[0]!.request)).toMatchObject({ orgId, projectId: project.id, name: 'orders', secret: '', rateLimitPerMinute: 600 });
      expect(db.committed).toEqual([]);
    });

    it('a silent webhook service: unavailable', async () => {
      const project = await db.newProject(orgId);
      const services = new FakeServiceClient().answer(CREATE, 'silent');
      expect(await refusalOf(new CreateWebhookHandler(services.asClient(), hooksOf(services)).execute({ project, name: 'orders', baseUrl: 'https://gw' }))).toBe(
        `unavailable: ${SERVICE_UNAVAILABLE.webhook}`,
      );
    });
  });

  describe('RevokeWebhookHandler', () => {
    const revoked = (outcome: RevokeHookOutcome) => toBinary(RevokeInboundHookReplySchema, create(RevokeInboundHookReplySchema, { outcome }));
    const handlerWith = (services: FakeServiceClient) => new RevokeWebhookHandler(services.asClient(), db.transactions(), db.projects(), hooksOf(services), db.propagation(services));

    it('revokes at the webhook service, then moves the project’s config version and hands InboundHookRevoked to every copy keeper', async () => {
      const project = await db.newProject(orgId);
      const hookId = randomUUID();
      const services = keepersAnswering().answer(REVOKE, revoked(RevokeHookOutcome.REVOKED));
      await handlerWith(services).execute({ project, hookId });
      expect(fromBinary(RevokeInboundHookRequestSchema, services.callsTo(REVOKE)[0]!.request)).toMatchObject({ orgId, projectId: project.id, id: hookId });
      expect((await db.project(project.id)).configVersion).toBe(project.configVersion + 1);
      expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.INBOUND_HOOK_REVOKED]);
      expect(db.committedPayload(0, EVENT_TYPES.INBOUND_HOOK_REVOKED)).toMatchObject({ orgId, projectId: project.id, hookId, configVersion: BigInt(project.configVersion + 1) });
      // The version moves only after the webhook service said REVOKED.
      expect(services.calls.map((call) => call.subject)).toEqual([REVOKE, ...COPY_KEEPERS]);
    });

    it('an id that is no UUID, or one the webhook service does not know: not found, and the version stays', async () => {
      const project = await db.newProject(orgId);
      const services = new FakeServiceClient().answer(REVOKE, revoked(RevokeHookOutcome.NOT_FOUND));
      expect(await refusalOf(handlerWith(services).execute({ project, hookId: 'nope' }))).toBe(`not-found: ${HOOK_MESSAGES.notFound}`);
      expect(services.calls).toEqual([]);
      expect(await refusalOf(handlerWith(services).execute({ project, hookId: randomUUID() }))).toBe(`not-found: ${HOOK_MESSAGES.notFound}`);
      expect((await db.project(project.id)).configVersion).toBe(project.configVersion);
      expect(db.committed).toEqual([]);
    });
  });
});
