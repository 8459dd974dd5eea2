import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { deadLetterService } from '../src/dead-letter.service.js';
import {
  claimNextUnreplayed,
  claimReplay,
  countUnreplayed,
  deadLetterExists,
  insertDeadLetter,
  interruptedReplays,
  listDeadLetters,
  recordReplay,
  type BulkReplayFilter,
  type ListFilter,
  type NewDeadLetter,
} from '../src/dead-letters/dead-letters.repository.js';

const T = new Date('2030-01-01T00:00:00.000Z').getTime();
const at = (offsetMs: number) => new Date(T + offsetMs);

/** The dead letters repository on a real PostgreSQL: each statement, its guards and races. */
describe('dead letters repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const orgId = randomUUID();

  const letter = (overrides: Partial<NewDeadLetter> = {}): NewDeadLetter => ({
    id: randomUUID(),
    orgId,
    projectId: randomUUID(),
    originKey: `run:${randomUUID()}`,
    source: 'crm',
    targetType: 'polling',
    triggerKey: 'orders',
    runTarget: 'FLOW',
    displayPayload: null,
    sealedPayload: 'sealed-payload',
    failureReason: 'Run ended FAILED',
    attemptCount: 1,
    invocationId: null,
    ...overrides,
  });
  const insert = (item: NewDeadLetter, when: Date) => insertDeadLetter(dataSource.manager, item, when);
  const page = (filter: Partial<ListFilter> & { projectId: string }) =>
    listDeadLetters(dataSource.manager, { source: null, unresolvedOnly: false, limit: 100, offset: 0, ...filter });
  const replayColumns = async (id: string) =>
    (await dataSource.query(`SELECT replayed_at, replay_status, replay_invocation_id, updated_at FROM dead_letters WHERE id = $1`, [id]))[0] as {
      replayed_at: Date | null;
      replay_status: string | null;
      replay_invocation_id: string | null;
      updated_at: Date;
    };

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([deadLetterService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'dead_letter', migrations: [] });
    await dataSource.initialize();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM dead_letters');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  describe('insertDeadLetter', () => {
    it('records a failure with every field, the display payload as JSON', async () => {
      const invocationId = randomUUID();
      const item = letter({
        runTarget: 'AUTOMATION',
        targetType: 'FLOW',
        displayPayload: { customer: '[REDACTED]', items: [1, 2] },
        attemptCount: 3,
        invocationId,
      });
      await insert(item, at(0));
      const [row] = await dataSource.query(`SELECT * FROM dead_letters WHERE id = $1`, [item.id]);
      expect(row).toEqual({
        id: item.id,
        org_id: orgId,
        project_id: item.projectId,
        origin_key: item.originKey,
        source: 'crm',
        target_type: 'FLOW',
        trigger_key: 'orders',
        run_target: 'AUTOMATION',
        display_payload: { customer: '[REDACTED]', items: [1, 2] },
        sealed_payload: 'sealed-payload',
        failure_reason: 'Run ended FAILED',
        attempt_count: 3,
        invocation_id: invocationId,
        replayed_at: null,
        replay_status: null,
        replay_invocation_id: null,
        created_at: at(0),
        updated_at: at(0),
      });
    });

    it('a failure of the same origin is recorded once (a poll retried after a crash reports the same run)', async () => {
      const first = letter();
      await insert(first, at(0));
      await insert(letter({ originKey: first.originKey, projectId: first.projectId, failureReason: 'again' }), at(1000));
      const { rows, total } = await page({ projectId: first.projectId });
      expect(total).toBe(1);
      expect(rows.map((row) => [row.id, row.failure_reason])).toEqual([[first.id, 'Run ended FAILED']]);
    });

    it('a missing display payload is stored as NULL, not as JSON null', async () => {
      const item = letter({ displayPayload: undefined });
      await insert(item, at(0));
      expect((await dataSource.query(`SELECT display_payload IS NULL AS missing FROM dead_letters WHERE id = $1`, [item.id]))[0]).toEqual({ missing: true });
    });
  });

  describe('listDeadLetters', () => {
    it("pages the project's dead letters newest first (id breaks ties), with the total of all matching", async () => {
      const projectId = randomUUID();
      const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
      await insert(letter({ projectId, id: ids[0] }), at(1000));
      await insert(letter({ projectId, id: ids[1] }), at(1000));
      const oldest = letter({ projectId });
      const newest = letter({ projectId });
      await insert(oldest, at(0));
      await insert(newest, at(2000));
      await insert(letter(), at(3000));

      const all = await page({ projectId });
      expect(all.total).toBe(4);
      expect(all.rows.map((row) => row.id)).toEqual([newest.id, ids[1], ids[0], oldest.id]);
      const second = await page({ projectId, limit: 2, offset: 2 });
      expect(second).toEqual({ total: 4, rows: all.rows.slice(2) });
      expect(await page({ projectId, offset: 10 })).toEqual({ total: 4, rows: [] });
      expect(await page({ projectId: randomUUID() })).toEqual({ total: 0, rows: [] });
    });

    it('answers a page and a total of one snapshot while letters are being written', async () => {
      // A total that counts a letter its page lacks made the console list a dead letter as
      // `total: 1, data: []`; writers race readers here until enough pages were read.
      const projectId = randomUUID();
      let writing = true;
      const writer = (async () => {
        for (let index = 0; writing && index < 2_000; index += 1) await insert(letter({ projectId }), new Date());
      })();
      const torn: Array<{ total: number; rows: number }> = [];
      try {
        for (let read = 0; read < 300; read += 1) {
          const found = await page({ projectId, limit: 200 });
          if (found.rows.length !== Math.min(found.total, 200)) torn.push({ total: found.total, rows: found.rows.length });
        }
      } finally {
        writing = false;
        await writer;
      }
      expect(torn).toEqual([]);
    });

    it('filters by source and by not yet replayed', async () => {
      const projectId = randomUUID();
      const crm = letter({ projectId, source: 'crm' });
      const shop = letter({ projectId, source: 'shop' });
      const replayed = letter({ projectId, source: 'shop' });
      for (const [index, item] of [crm, shop, replayed].entries()) await insert(item, at(index));
      await claimReplay(dataSource.manager, projectId, replayed.id, at(10));

      expect((await page({ projectId, source: 'shop' })).rows.map((row) => row.id)).toEqual([replayed.id, shop.id]);
      expect(await page({ projectId, unresolvedOnly: true })).toMatchObject({ total: 2 });
      expect((await page({ projectId, unresolvedOnly: true })).rows.map((row) => row.id)).toEqual([shop.id, crm.id]);
      expect((await page({ projectId, source: 'shop', unresolvedOnly: true })).rows.map((row) => row.id)).toEqual([shop.id]);
      expect(await page({ projectId, source: 'nothing' })).toEqual({ total: 0, rows: [] });
    });

    it('answers the row as the list and replays read it', async () => {
      const item = letter({ displayPayload: { a: 1 } });
      await insert(item, at(0));
      const [row] = (await page({ projectId: item.projectId })).rows;
      expect(row).toEqual({
        id: item.id,
        org_id: orgId,
        project_id: item.projectId,
        source: 'crm',
        target_type: 'polling',
        trigger_key: 'orders',
        run_target: 'FLOW',
        display_payload: { a: 1 },
        sealed_payload: 'sealed-payload',
        failure_reason: 'Run ended FAILED',
        attempt_count: 1,
        replayed_at: null,
        replay_status: null,
        created_at: at(0),
        updated_at: at(0),
      });
    });
  });

  describe('claimReplay and deadLetterExists', () => {
    it('claims a dead letter for its one replay; a second claim gets nothing', async () => {
      const item = letter();
      await insert(item, at(0));
      const claimed = await claimReplay(dataSource.manager, item.projectId, item.id, at(500));
      expect(claimed).toMatchObject({ id: item.id, replayed_at: at(500), updated_at: at(500), replay_status: null, sealed_payload: 'sealed-payload' });
      expect(await claimReplay(dataSource.manager, item.projectId, item.id, at(600))).toBeNull();
      expect((await replayColumns(item.id)).replayed_at).toEqual(at(500));
      expect(await deadLetterExists(dataSource.manager, item.projectId, item.id)).toBe(true);
    });

    it("another project's dead letter, or an unknown one, is neither claimed nor found", async () => {
      const item = letter();
      await insert(item, at(0));
      const otherProject = randomUUID();
      expect(await claimReplay(dataSource.manager, otherProject, item.id, at(500))).toBeNull();
      expect(await deadLetterExists(dataSource.manager, otherProject, item.id)).toBe(false);
      expect(await claimReplay(dataSource.manager, item.projectId, randomUUID(), at(500))).toBeNull();
      expect(await deadLetterExists(dataSource.manager, item.projectId, randomUUID())).toBe(false);
      expect((await replayColumns(item.id)).replayed_at).toBeNull();
    });

    it('of concurrent claims exactly one wins', async () => {
      const item = letter();
      await insert(item, at(0));
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, index) => dataSource.transaction((manager) => claimReplay(manager, item.projectId, item.id, at(100 + index)))),
      );
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    });
  });

  describe('recordReplay', () => {
    it('records the outcome once: the first writer wins', async () => {
      const item = letter();
      await insert(item, at(0));
      await claimReplay(dataSource.manager, item.projectId, item.id, at(100));
      const invocationId = randomUUID();
      await recordReplay(dataSource.manager, item.id, 'SUCCESS', invocationId, at(200));
      await recordReplay(dataSource.manager, item.id, 'FAILED: late', null, at(300));
      expect(await replayColumns(item.id)).toEqual({ replayed_at: at(100), replay_status: 'SUCCESS', replay_invocation_id: invocationId, updated_at: at(200) });
    });

    it('a replay that could not start is recorded without a run', async () => {
      const item = letter();
      await insert(item, at(0));
      await claimReplay(dataSource.manager, item.projectId, item.id, at(100));
      await recordReplay(dataSource.manager, item.id, 'FAILED: The run could not be started: timeout', null, at(200));
      expect(await replayColumns(item.id)).toMatchObject({ replay_status: 'FAILED: The run could not be started: timeout', replay_invocation_id: null });
    });
  });

  describe('interruptedReplays', () => {
    it('finds replays claimed before the cut-off and never finished, oldest claim first, up to the limit', async () => {
      const projectId = randomUUID();
      const items = Array.from({ length: 5 }, () => letter({ projectId }));
      for (const item of items) await insert(item, at(0));
      const [older, old, finished, recent, unclaimed] = items as [NewDeadLetter, NewDeadLetter, NewDeadLetter, NewDeadLetter, NewDeadLetter];
      await claimReplay(dataSource.manager, projectId, old.id, at(2000));
      await claimReplay(dataSource.manager, projectId, older.id, at(1000));
      await claimReplay(dataSource.manager, projectId, finished.id, at(1500));
      await recordReplay(dataSource.manager, finished.id, 'SUCCESS', randomUUID(), at(1600));
      await claimReplay(dataSource.manager, projectId, recent.id, at(5000));

      expect((await interruptedReplays(dataSource.manager, at(5000), 10)).map((row) => row.id)).toEqual([older.id, old.id]);
      expect((await interruptedReplays(dataSource.manager, at(5001), 10)).map((row) => row.id)).toEqual([older.id, old.id, recent.id]);
      expect((await interruptedReplays(dataSource.manager, at(5001), 1)).map((row) => row.id)).toEqual([older.id]);
      expect((await interruptedReplays(dataSource.manager, at(1000), 10)).map((row) => row.id)).toEqual([]);
      expect((await replayColumns(unclaimed.id)).replayed_at).toBeNull();
    });
  });
  describe('bulk replay: countUnreplayed and claimNextUnreplayed', () => {
    const filter = (projectId: string, overrides: Partial<BulkReplayFilter> = {}): BulkReplayFilter => ({
      projectId,
      source: null,
      targetType: null,
      from: null,
      to: null,
      ...overrides,
    });

    it('counts and claims only the project\'s unreplayed events matching source, target type and the created range, oldest first', async () => {
      const projectId = randomUUID();
      const a1 = letter({ projectId, source: 'a' });
      const a2 = letter({ projectId, source: 'a', targetType: 'FLOW', runTarget: 'AUTOMATION' });
      const b1 = letter({ projectId, source: 'b' });
      const replayed = letter({ projectId, source: 'a' });
      await insert(a1, at(0));
      await insert(a2, at(1000));
      await insert(b1, at(2000));
      await insert(replayed, at(3000));
      await insert(letter({ source: 'a' }), at(0)); // another project
      expect(await claimReplay(dataSource.manager, projectId, replayed.id, at(4000))).not.toBeNull();
      const count = (overrides: Partial<BulkReplayFilter>) => countUnreplayed(dataSource.manager, filter(projectId, overrides));

      expect(await count({})).toBe(3);
      expect(await count({ source: 'a' })).toBe(2);
      expect(await count({ targetType: 'FLOW' })).toBe(1);
      expect(await count({ targetType: 'polling', source: 'a' })).toBe(1);
      expect(await count({ from: at(1000) })).toBe(2);
      expect(await count({ to: at(1000) })).toBe(2);
      expect(await count({ from: at(1000), to: at(1000) })).toBe(1);

      const claimed = [];
      for (let next; (next = await claimNextUnreplayed(dataSource.manager, filter(projectId, { source: 'a' }), at(5000))); ) claimed.push(next.id);
      expect(claimed).toEqual([a1.id, a2.id]);
      expect(await count({})).toBe(1);
      expect(await claimReplay(dataSource.manager, projectId, a1.id, at(6000))).toBeNull();
    });

    it('gives each event to one claimer when bulk claims and single claims race', async () => {
      const projectId = randomUUID();
      const letters = Array.from({ length: 30 }, () => letter({ projectId }));
      for (const [index, item] of letters.entries()) await insert(item, at(index));
      const claimedBy: string[][] = [[], [], [], [], [], []];
      const bulkClaimer = async (mine: string[]) => {
        for (let next; (next = await claimNextUnreplayed(dataSource.manager, filter(projectId), at(100))); ) mine.push(next.id);
      };
      const singles = letters.filter((_, index) => index % 3 === 0).map(async (item) => ((await claimReplay(dataSource.manager, projectId, item.id, at(100))) ? item.id : null));
      const [, , , , , , ...singleResults] = await Promise.all([...claimedBy.map(bulkClaimer), ...singles]);
      const all = [...claimedBy.flat(), ...singleResults.filter((id): id is string => id !== null)];
      expect(all).toHaveLength(30);
      expect(new Set(all).size).toBe(30);
      expect(await countUnreplayed(dataSource.manager, filter(projectId))).toBe(0);
    });
  });
});
