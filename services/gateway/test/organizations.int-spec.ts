import { EVENT_TYPES, GATEWAY_EVENT_SUBJECTS } from '@runline/contracts';
import { AddMemberHandler } from '../src/organizations/add-member.handler.js';
import { CreateOrganizationHandler } from '../src/organizations/create-organization.handler.js';
import { SetPlanHandler } from '../src/organizations/set-plan.handler.js';
import { CHANGE_NOT_YET_APPLIED } from '../src/platform/changes/change-propagation.js';
import { OrganizationRepository } from '../src/platform/store/organization.repository.js';
import { FakeServiceClient, refusalOf } from './fake-service-client.js';
import { COPY_KEEPERS, HandlerDatabase, keepersAnswering } from './handler-database.js';

/** The organization handlers on a real PostgreSQL, with the copy keepers (ApplyGatewayChange) faked. */
describe('organization handlers', () => {
  const db = new HandlerDatabase();
  const organizations = () => new OrganizationRepository(db.dataSource);
  const organization = async (id: string) => {
    const found = await organizations().findById(id);
    if (!found) throw new Error(`no organization ${id}`);
    return found;
  };
  const members = (orgId: string): Promise<Array<{ userId: string; role: string }>> =>
    db.dataSource.query('SELECT user_id AS "userId", role FROM memberships WHERE org_id = $1 ORDER BY user_id', [orgId]);

  beforeAll(() => db.open());
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  describe('CreateOrganizationHandler', () => {
    it('creates it with no plan limits, its creator as OWNER, and hands OrganizationCreated to every copy keeper', async () => {
      const services = keepersAnswering();
      const { orgId, name } = await new CreateOrganizationHandler(db.transactions(), organizations(), db.propagation(services)).execute({ userId: 'user-1', name: 'Acme' });
      expect(name).toBe('Acme');
      expect(await organization(orgId)).toMatchObject({ name: 'Acme', monthlyQuota: null, rateLimitPerMinute: null, rateLimitWindowMs: null, renewalDay: null, planVersion: 0 });
      expect((await members(orgId)).map((member) => [member.userId, member.role])).toEqual([['user-1', 'OWNER']]);
      expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.ORGANIZATION_CREATED]);
      expect(db.committedPayload(0, EVENT_TYPES.ORGANIZATION_CREATED)).toMatchObject({ orgId, name: 'Acme' });
      expect(services.calls.map((call) => call.subject).sort()).toEqual([...COPY_KEEPERS].sort());
    });
  });

  describe('SetPlanHandler', () => {
    const plan = { monthlyQuota: 1000, rateLimitPerMinute: 60, rateLimitWindowMs: 60_000, renewalDay: 15 };

    it('replaces the plan, moves its version, and hands OrganizationPlanChanged to every copy keeper', async () => {
      const orgId = await db.newOrganization();
      const services = keepersAnswering();
      const handler = new SetPlanHandler(db.transactions(), organizations(), db.rateLimits(), db.propagation(services));
      expect(await handler.execute({ orgId, plan })).toEqual({ orgId, ...plan });
      expect(await organization(orgId)).toMatchObject({ ...plan, planVersion: 1 });
      expect(db.committedPayload(0, EVENT_TYPES.ORGANIZATION_PLAN_CHANGED)).toMatchObject({ orgId, monthlyQuota: 1000n, planVersion: 1n });
      expect(services.calls.map((call) => call.subject).sort()).toEqual([...COPY_KEEPERS].sort());
      await handler.execute({ orgId, plan: { monthlyQuota: null, rateLimitPerMinute: null, rateLimitWindowMs: null, renewalDay: null } });
      expect(await organization(orgId)).toMatchObject({ monthlyQuota: null, renewalDay: null, planVersion: 2 });
    });

    it('a copy keeper silent: the plan stands, the answer is 503', async () => {
      const orgId = await db.newOrganization();
      const services = new FakeServiceClient().answer(COPY_KEEPERS[0]!, 'silent').answer(COPY_KEEPERS[1]!, new Uint8Array());
      const handler = new SetPlanHandler(db.transactions(), organizations(), db.rateLimits(), db.propagation(services));
      expect(await refusalOf(handler.execute({ orgId, plan }))).toBe(`unavailable: ${CHANGE_NOT_YET_APPLIED}`);
      expect((await organization(orgId)).monthlyQuota).toBe(1000);
    });
  });

  describe('AddMemberHandler', () => {
    it('adds a member with the role, once: a second add is a conflict and keeps the first role', async () => {
      const orgId = await db.newOrganization();
      const handler = new AddMemberHandler(organizations());
      expect(await handler.execute({ orgId, userId: 'user-2', role: 'EDITOR' })).toEqual({ orgId, userId: 'user-2', role: 'EDITOR' });
      expect(await refusalOf(handler.execute({ orgId, userId: 'user-2', role: 'OWNER' }))).toBe('conflict: User is already a member of this organization');
      expect((await members(orgId)).map((member) => [member.userId, member.role])).toEqual([['user-2', 'EDITOR']]);
      expect(db.committed).toEqual([]);
    });
  });
});
