import { randomUUID } from 'node:crypto';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, queryDatabase, type TestDatabase } from '@runline/testing';
import { gatewayService } from '../src/gateway.service.js';
import { AddDraftVersions1763700000040 } from '../src/migrations/1763700000040-add-draft-versions.js';

/**
 * The migration that gives projects a draft version, on rows written before it: a published
 * number keeps naming the document that was published, and the next publish is never smaller.
 */
describe('draft versions migration', () => {
  let database: TestDatabase;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(database.url, query, parameters);

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('backfills draft_version from what each project held', async () => {
    const index = gatewayService.migrations.indexOf(AddDraftVersions1763700000040);
    expect(index).toBeGreaterThan(0);
    await migrateServices([{ ...gatewayService, migrations: gatewayService.migrations.slice(0, index) }], database.url);

    const orgId = randomUUID();
    await sql(`INSERT INTO gateway.organizations (id, name) VALUES ($1, 'Old org')`, [orgId]);
    const projects = {
      empty: { draft: null, draftAt: null, published: 0, publishedAt: null },
      draftOnly: { draft: '{"v":1}', draftAt: '2025-01-01T00:00:00Z', published: 0, publishedAt: null },
      publishedAsIs: { draft: '{"v":2}', draftAt: '2025-01-01T00:00:00Z', published: 2, publishedAt: '2025-01-02T00:00:00Z' },
      editedSince: { draft: '{"v":4}', draftAt: '2025-01-03T00:00:00Z', published: 3, publishedAt: '2025-01-02T00:00:00Z' },
    };
    const ids: Record<string, string> = {};
    for (const [name, row] of Object.entries(projects)) {
      ids[name] = randomUUID();
      await sql(
        `INSERT INTO gateway.projects (id, org_id, name, type, draft_definition, draft_updated_at, published_definition, published_version, published_at)
         VALUES ($1, $2, $3, 'AUTOMATION', $4::json, $5, $6::json, $7, $8)`,
        [ids[name], orgId, name, row.draft, row.draftAt, row.published ? row.draft : null, row.published, row.publishedAt],
      );
    }

    await migrateServices([gatewayService], database.url);
    const versions = async () =>
      Object.fromEntries(
        (await sql('SELECT name, draft_version, published_version FROM gateway.projects WHERE org_id = $1', [orgId])).map((row) => [row.name, [row.draft_version, row.published_version]]),
      );
    expect(await versions()).toEqual({ empty: [0, 0], draftOnly: [1, 0], publishedAsIs: [2, 2], editedSince: [4, 3] });
    await expect(sql('UPDATE gateway.projects SET published_version = draft_version + 1 WHERE id = $1', [ids.editedSince])).rejects.toThrow(/projects_published_not_ahead_of_draft/);
  });
});
