import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { createLogger } from '@runline/observability';
import { migrateServices, SecretBox } from '@runline/runtime';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@runline/testing';
import type { InvocationConfig } from '../src/config.js';
import { invocationService } from '../src/invocation.service.js';
import { BotSessions, SessionTurnTimeoutError, type BotSessionState, type SessionTurn } from '../src/runs/bot-sessions.js';

const LEASE_MS = 1000;

/**
 * Turns of bot sessions on a real PostgreSQL, with two `BotSessions` on two pools standing for
 * two replicas: one turn at a time per session across them, none lost, a dead holder's turn
 * taken over once its lease expires, a turn that outlived its lease run again.
 */
describe('bot session turns across replicas', () => {
  let database: TestDatabase;
  const dataSources: DataSource[] = [];
  const replicas: BotSessions[] = [];
  const projectId = randomUUID();
  const secrets = new SecretBox(TEST_SECRETS_KEY);

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([invocationService], database.url);
    for (let i = 0; i < 2; i++) {
      // Small pools, as a loaded replica would have: waiting turns must not hold connections.
      const dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', migrations: [], poolSize: 3 });
      await dataSource.initialize();
      dataSources.push(dataSource);
      const logger = createLogger({ service: 'test', level: 'silent' });
      replicas.push(new BotSessions(dataSource, secrets, { RUN_LEASE_MS: LEASE_MS } as InvocationConfig, logger));
    }
  });
  afterAll(async () => {
    for (const replica of replicas) replica.onApplicationShutdown();
    await Promise.all(dataSources.map((dataSource) => dataSource.destroy()));
    await database?.drop();
  });

  const turnOf = (sessionId: string, holder: string = randomUUID(), deadlineMs = 20_000): SessionTurn => ({ projectId, sessionId, holder, deadline: Date.now() + deadlineMs });
  const stateWith = (count: number): BotSessionState => ({ version: 1, vars: { count }, waitingAt: null });
  const countIn = (state: BotSessionState | null) => (state?.vars.count as number | undefined) ?? 0;
  /** A turn that counts one more message, taking `ms` over it. */
  const counting = (ms: number) => async (state: BotSessionState | null) => {
    const count = countIn(state) + 1;
    await sleep(ms);
    return { state: stateWith(count), result: count };
  };
  const rowOf = async (sessionId: string) =>
    (await dataSources[0]!.query('SELECT sealed_state, revision, turn_holder FROM bot_sessions WHERE project_id = $1 AND session_id = $2', [projectId, sessionId]))[0] as {
      sealed_state: string | null;
      revision: number;
      turn_holder: string | null;
    };
  const countSaved = async (sessionId: string) => countIn(JSON.parse(secrets.open((await rowOf(sessionId)).sealed_state!)) as BotSessionState);

  it('runs 60 messages of one session sent at once to two replicas one at a time: each count once, the last 60', async () => {
    const results = await Promise.all(Array.from({ length: 60 }, (_, index) => replicas[index % 2]!.takeTurn(turnOf('busy'), counting(Math.floor(Math.random() * 4)))));
    expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
    expect(await countSaved('busy')).toBe(60);
    const row = await rowOf('busy');
    expect(row.revision).toBe(60);
    expect(row.turn_holder).toBeNull();
  });

  it('a turn waiting on a slow call holds no connection: 20 waiting turns on pools of 3 still let other statements through', async () => {
    const turns = Array.from({ length: 20 }, (_, index) => replicas[index % 2]!.takeTurn(turnOf('slow'), counting(30)));
    await sleep(50);
    // The pools are not exhausted by the waiters.
    const started = Date.now();
    await Promise.all(dataSources.map((dataSource) => dataSource.query('SELECT 1')));
    expect(Date.now() - started).toBeLessThan(200);
    expect((await Promise.all(turns)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
  });

  it('takes over the turn of a holder that died once its lease has expired, from the state it left', async () => {
    const waits: boolean[] = [];
    const noting = async (state: BotSessionState | null, waited: boolean) => {
      waits.push(waited);
      return counting(0)(state);
    };
    await replicas[0]!.takeTurn(turnOf('orphan'), noting);
    // A replica took the turn and died: its lease is never renewed nor given back.
    await dataSources[0]!.query(
      `UPDATE bot_sessions SET turn_holder = 'dead-host:1:deadbeef x', turn_expires_at = now() + interval '${LEASE_MS} milliseconds' WHERE project_id = $1 AND session_id = 'orphan'`,
      [projectId],
    );
    const started = Date.now();
    expect(await replicas[1]!.takeTurn(turnOf('orphan'), noting)).toBe(2);
    // The first turn came at once; the second waited (its run gets what is left of its time limit).
    expect(waits).toEqual([false, true]);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(LEASE_MS - 100);
    expect(waited).toBeLessThan(LEASE_MS + 1000);
  });

  it('renews a long turn: another replica does not take a live turn that outlasts the lease', async () => {
    const long = replicas[0]!.takeTurn(turnOf('long'), counting(LEASE_MS * 2.5));
    await sleep(50);
    const next = replicas[1]!.takeTurn(turnOf('long'), counting(0));
    expect(await long).toBe(1);
    expect(await next).toBe(2);
  });

  it('a message whose turn does not come before its deadline gives up with SessionTurnTimeoutError, and the session goes on', async () => {
    const slow = replicas[0]!.takeTurn(turnOf('deadline'), counting(600));
    await sleep(50);
    await expect(replicas[1]!.takeTurn(turnOf('deadline', randomUUID(), 200), counting(0))).rejects.toBeInstanceOf(SessionTurnTimeoutError);
    // Also one queued behind the slow turn in the same process.
    await expect(replicas[0]!.takeTurn(turnOf('deadline', randomUUID(), 200), counting(0))).rejects.toBeInstanceOf(SessionTurnTimeoutError);
    expect(await slow).toBe(1);
    expect(await replicas[1]!.takeTurn(turnOf('deadline'), counting(0))).toBe(2);
  });

  it('a failed turn gives the session back at once and keeps its state', async () => {
    await replicas[0]!.takeTurn(turnOf('failing'), counting(0));
    await expect(replicas[0]!.takeTurn(turnOf('failing'), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const started = Date.now();
    expect(await replicas[1]!.takeTurn(turnOf('failing'), counting(0))).toBe(2);
    expect(Date.now() - started).toBeLessThan(LEASE_MS / 2);
  });

  it('the same run retried in its process takes its own turn back at once', async () => {
    const holder = `this-host:1:abcd ${randomUUID()}`;
    await dataSources[0]!.query(
      `INSERT INTO bot_sessions (project_id, session_id, sealed_state, revision, turn_holder, turn_expires_at)
       VALUES ($1, 'retried', NULL, 0, $2, now() + interval '1 hour')`,
      [projectId, holder],
    );
    expect(await replicas[0]!.takeTurn(turnOf('retried', holder, 200), counting(0))).toBe(1);
  });

  it('a turn that outlived its lease while the session moved on is refused its save and runs again on the new state', async () => {
    await replicas[0]!.takeTurn(turnOf('stalled'), counting(0));
    let runs = 0;
    const result = await replicas[0]!.takeTurn(turnOf('stalled'), async (state) => {
      runs += 1;
      if (runs === 1) {
        // Meanwhile this turn's lease lapsed and another replica's turn ran and saved count 5.
        await dataSources[1]!.query(
          `UPDATE bot_sessions SET sealed_state = $2, revision = revision + 1, turn_holder = NULL, turn_expires_at = NULL WHERE project_id = $1 AND session_id = 'stalled'`,
          [projectId, secrets.seal(JSON.stringify(stateWith(5)))],
        );
      }
      return { state: stateWith(countIn(state) + 1), result: countIn(state) + 1 };
    });
    expect(runs).toBe(2);
    expect(result).toBe(6);
    expect(await countSaved('stalled')).toBe(6);
  });
});
