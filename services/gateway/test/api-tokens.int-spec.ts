import { EVENT_TYPES, GATEWAY_EVENT_SUBJECTS } from '@runline/contracts';
import { ApiTokenFormat, hashApiToken } from '../src/platform/access/api-token-format.js';
import { CHANGE_NOT_YET_APPLIED } from '../src/platform/changes/change-propagation.js';
import type { ApiTokenEntity } from '../src/platform/store/api-token.entity.js';
import { ApiTokenRepository } from '../src/platform/store/api-token.repository.js';
import type { ProjectEntity } from '../src/platform/store/project.entity.js';
import { CreateApiTokenHandler } from '../src/tokens/create-api-token.handler.js';
import { RevokeApiTokenHandler } from '../src/tokens/revoke-api-token.handler.js';
import { FakeServiceClient, refusalOf } from './fake-service-client.js';
import { COPY_KEEPERS as KEEPERS, HandlerDatabase } from './handler-database.js';

/**
 * The API token handlers on a real PostgreSQL (what they write), with the services that keep
 * copies of gateway data faked (the invocation and polling services' ApplyGatewayChange).
 */
describe('API token handlers', () => {
  const db = new HandlerDatabase();
  let orgId: string;

  const newProject = (type: 'CHATBOT' | 'AUTOMATION' = 'CHATBOT'): Promise<ProjectEntity> => db.newProject(orgId, type);
  const configVersionOf = async (projectId: string) => (await db.project(projectId)).configVersion;
  /** The stored row, revoked or not. */
  const tokenRow = async (id: string): Promise<ApiTokenEntity> => {
    const [row]: ApiTokenEntity[] = await db.dataSource.query(
      `SELECT id, org_id AS "orgId", project_id AS "projectId", name, prefix, token_hash AS "tokenHash", scopes, expires_at AS "expiresAt",
              revoked_at AS "revokedAt", last_used_at AS "lastUsedAt", created_by AS "createdBy", created_at AS "createdAt"
         FROM api_tokens WHERE id = $1`,
      [id],
    );
    if (!row) throw new Error(`no token ${id}`);
    return row;
  };
  const creator = () => new CreateApiTokenHandler(new ApiTokenRepository(db.dataSource), new ApiTokenFormat('rl'));
  const revoker = (services: FakeServiceClient) => {
    const projects = db.projects();
    return new RevokeApiTokenHandler(db.transactions(), new ApiTokenRepository(db.dataSource), projects, db.directory(projects), db.propagation(services));
  };

  beforeAll(async () => {
    await db.open();
    orgId = await db.newOrganization('Tokens');
  });
  afterAll(() => db.close());
  beforeEach(() => db.reset());

  describe('CreateApiTokenHandler', () => {
    it('stores the token’s hash (never the token), its scopes once each, and shows the token once', async () => {
      const project = await newProject();
      const issued = await creator().execute({ project, userId: 'user-1', name: 'ci', scopes: ['flow:trigger', 'bot:invoke', 'flow:trigger'] });
      expect(issued).toMatchObject({ name: 'ci', scopes: ['flow:trigger', 'bot:invoke'], expiresAt: null });
      expect(issued.token.startsWith('rl_ext_')).toBe(true);
      const row = await tokenRow(issued.id);
      expect(row).toMatchObject({ orgId, projectId: project.id, name: 'ci', prefix: issued.prefix, scopes: ['flow:trigger', 'bot:invoke'], createdBy: 'user-1', revokedAt: null });
      expect(row.tokenHash).toBe(hashApiToken(issued.token));
      expect(JSON.stringify(row)).not.toContain(issued.token);
    });

    it('refuses flow:trigger for an automation project, and an expiry in the past; nothing is stored', async () => {
      const project = await newProject('AUTOMATION');
      expect(await refusalOf(creator().execute({ project, userId: 'u', name: 'x', scopes: ['flow:trigger'] }))).toBe('invalid: flow:trigger is only offered for chatbot projects');
      expect(await refusalOf(creator().execute({ project, userId: 'u', name: 'x', scopes: ['automation:trigger'], expiresAt: '2020-01-01T00:00:00Z' }))).toBe(
        'invalid: expiresAt must be in the future',
      );
      expect(await db.dataSource.query('SELECT id FROM api_tokens WHERE project_id = $1', [project.id])).toEqual([]);
    });
  });

  describe('RevokeApiTokenHandler', () => {
    it('revokes, moves the project’s config version, emits ApiTokenRevoked and hands it to every copy keeper before answering', async () => {
      const project = await newProject();
      const { id } = await creator().execute({ project, userId: 'u', name: 'ci', scopes: ['bot:invoke'] });
      const before = await configVersionOf(project.id);
      const services = new FakeServiceClient();
      for (const subject of KEEPERS) services.answer(subject, new Uint8Array());
      await revoker(services).execute({ project, tokenId: id });

      expect((await tokenRow(id)).revokedAt).toBeInstanceOf(Date);
      expect(await configVersionOf(project.id)).toBe(before + 1);
      expect(db.committed.map((message) => message.subject)).toEqual([GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED]);
      expect(services.calls.map((call) => call.subject).sort()).toEqual([...KEEPERS].sort());
      expect(services.calls.every((call) => call.request === db.committed[0]!.data)).toBe(true);
      expect(db.committedPayload(0, EVENT_TYPES.API_TOKEN_REVOKED)).toMatchObject({ orgId, projectId: project.id, tokenId: id, configVersion: BigInt(before + 1) });
    });

    it('a copy keeper not deployed (no responders) is fine; one silent: the revocation stands, the answer is 503', async () => {
      const project = await newProject();
      const first = await creator().execute({ project, userId: 'u', name: 'a', scopes: ['bot:invoke'] });
      const second = await creator().execute({ project, userId: 'u', name: 'b', scopes: ['bot:invoke'] });
      // The first copy keeper not deployed, or silent; every other one answers.
      const keepers = (first: 'no-responders' | 'silent') => {
        const services = new FakeServiceClient();
        for (const subject of KEEPERS) services.answer(subject, subject === KEEPERS[0] ? first : new Uint8Array());
        return services;
      };
      const absent = keepers('no-responders');
      await revoker(absent).execute({ project, tokenId: first.id });
      const silent = keepers('silent');
      expect(await refusalOf(revoker(silent).execute({ project, tokenId: second.id }))).toBe(`unavailable: ${CHANGE_NOT_YET_APPLIED}`);
      expect((await tokenRow(second.id)).revokedAt).toBeInstanceOf(Date);
    });

    it('an id that is no UUID, another project’s token, or one already revoked: not found, nothing written', async () => {
      const project = await newProject();
      const other = await newProject();
      const { id } = await creator().execute({ project: other, userId: 'u', name: 'x', scopes: ['bot:invoke'] });
      const services = new FakeServiceClient();
      const before = await configVersionOf(project.id);
      expect(await refusalOf(revoker(services).execute({ project, tokenId: 'nope' }))).toBe('not-found: API token not found');
      expect(await refusalOf(revoker(services).execute({ project, tokenId: id }))).toBe('not-found: API token not found');
      expect((await tokenRow(id)).revokedAt).toBeNull();
      for (const subject of KEEPERS) services.answer(subject, new Uint8Array());
      await revoker(services).execute({ project: other, tokenId: id });
      expect(await refusalOf(revoker(services).execute({ project: other, tokenId: id }))).toBe('not-found: API token not found');
      expect(await configVersionOf(project.id)).toBe(before);
    });
  });
});
