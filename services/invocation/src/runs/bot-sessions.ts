import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RunVars } from '@runline/engine';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';

/** What a conversation keeps between messages. */
export interface BotSessionState {
  /** Published version the state belongs to; a new version starts the conversation afresh at an `ask`. */
  version: number;
  vars: RunVars;
  /** Set when the bot asked a question: the session's next message answers it. */
  waitingAt: { nodeId: string; saveAs: string | null } | null;
}

/** One message's turn in its session. */
export interface SessionTurn {
  projectId: string;
  sessionId: string;
  /**
   * Who takes the turn: this process and the run (`<lease owner> <invocation id>`). Unique per
   * process even for replicas started with the same environment on one host (the lease owner
   * holds a random part); the same run retried in this process takes its own turn back at once.
   */
  holder: string;
  /** Epoch ms past which the message stops waiting for its turn (its run's time limit). */
  deadline: number;
}

/** The message could not have its turn before its deadline: earlier messages of the session held it. */
export class SessionTurnTimeoutError extends Error {
  constructor() {
    super("the session's earlier messages held its turn past the deadline");
    this.name = 'SessionTurnTimeoutError';
  }
}

// While another replica holds the turn, the claim is tried again after 5 ms, doubling up to
// 50 ms (with jitter): a short wait right after a quick turn, little load behind a slow one.
const FIRST_RETRY_MS = 5;
const LAST_RETRY_MS = 50;
// A turn whose lease lapsed (its process stalled) and whose session moved on meanwhile is run
// again on the new state; this many times at most.
const TURN_ATTEMPTS = 3;

/**
 * Bot conversations: one row per (project, session id), state sealed at rest. The messages of
 * one session take turns, one at a time on every replica (DESIGN.md sections 13 and 15), so
 * each message sees the state the previous one left and no update is lost.
 *
 * How: the turn is a lease on the session row, taken by one statement (`turn_holder`,
 * `turn_expires_at`, on the database's clock), renewed while the turn runs, and given back by
 * the statement that saves the new state, which applies only while this turn still holds the
 * lease (a fencing check). Why not the alternatives:
 * - `SELECT … FOR UPDATE` (or `pg_advisory_xact_lock`) in a transaction held across the turn:
 *   a turn may wait seconds on http nodes, and every message waiting behind it would block a
 *   pooled connection too; 20 messages of one session exhaust a pool of 10, and the holder
 *   itself then waits for a connection (to renew its run lease, to record its end) held by its
 *   own waiters: a deadlock. A dedicated connection per waiting message multiplies connections.
 * - Session-level advisory locks on one dedicated connection per process: no connection per
 *   waiter, but a cut connection silently drops every lock while the turns go on, so a fencing
 *   check is needed anyway, plus reconnect handling.
 * - Optimistic (`UPDATE … WHERE revision = $n`, the turn re-run on conflict): nothing held, but
 *   20 messages at once re-run up to 19 times each (http nodes called again, replies late), and
 *   a steady stream can starve one message for ever.
 * The lease holds no connection between statements: uncontended, a turn costs the claim (which
 * also reads the state) and the save (which also releases), as load and save did before. A
 * crash mid-turn leaves a lease that expires after RUN_LEASE_MS (the run's own lease length), so
 * the session is never stuck; a turn that outlived its lease (a stalled process) finds its save
 * refused and runs again on the state the session has now. Waiting is bounded by the run's time
 * limit, so nothing waits for ever and no statement waits on a lock.
 *
 * In this process, messages of one session also queue in memory in arrival order (`tails`): an
 * optimization only (one claimant per session per replica polls the database instead of all,
 * and local messages keep their order); the lease is the guarantee.
 */
@Injectable()
export class BotSessions implements OnApplicationShutdown {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly renewals = new Set<NodeJS.Timeout>();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationShutdown(): void {
    for (const timer of this.renewals) clearInterval(timer);
  }

  /**
   * Runs `work` as the session's only turn across replicas: it gets the state the previous turn
   * left (null for a new session) and whether the turn had to wait for earlier messages, and
   * returns the state to keep. Throws `SessionTurnTimeoutError` when the turn did not come
   * before `turn.deadline`.
   */
  async takeTurn<T>(turn: SessionTurn, work: (state: BotSessionState | null, waited: boolean) => Promise<{ state: BotSessionState; result: T }>): Promise<T> {
    return this.inArrivalOrder(`${turn.projectId}\u0000${turn.sessionId}`, turn.deadline, async (queued) => {
      for (let attempt = 1; ; attempt++) {
        const { state, waited } = await this.claim(turn);
        const renewal = this.keepClaimed(turn);
        let saved = false;
        try {
          const { state: next, result } = await work(state, queued || waited || attempt > 1);
          saved = await this.saveAndRelease(turn, next);
          if (saved) return result;
        } finally {
          clearInterval(renewal);
          this.renewals.delete(renewal);
          // A turn that failed gives the session back at once (if it still holds it); should
          // that fail too, the lease expires.
          if (!saved) await this.release(turn).catch((error: unknown) => this.logger.warn({ err: error, sessionId: turn.sessionId }, 'could not give a bot session turn back'));
        }
        if (attempt >= TURN_ATTEMPTS) throw new Error("the session's turn was lost repeatedly (its lease lapsed while the turn ran)");
        this.logger.warn({ sessionId: turn.sessionId, attempt }, "a bot session turn outlived its lease and the session moved on: the message runs again on the session's state");
      }
    });
  }

  /** Takes the turn (waiting while another holder's live lease has it); answers the session's state. */
  private async claim(turn: SessionTurn): Promise<{ state: BotSessionState | null; waited: boolean }> {
    let pause = FIRST_RETRY_MS;
    for (let tries = 1; ; tries++) {
      // A missing row is created holding the turn (no state yet); an existing one is taken when
      // free, expired, or already this holder's (a retry of the same run).
      const rows: Array<{ sealed_state: string | null }> = await this.dataSource.query(
        `INSERT INTO bot_sessions AS s (project_id, session_id, sealed_state, revision, turn_holder, turn_expires_at)
         VALUES ($1, $2, NULL, 0, $3, now() + $4::integer * interval '1 millisecond')
         ON CONFLICT (project_id, session_id) DO UPDATE
           SET turn_holder = EXCLUDED.turn_holder, turn_expires_at = EXCLUDED.turn_expires_at
           WHERE s.turn_holder IS NULL OR s.turn_holder = EXCLUDED.turn_holder OR s.turn_expires_at <= now()
         RETURNING s.sealed_state`,
        [turn.projectId, turn.sessionId, turn.holder, this.config.RUN_LEASE_MS],
      );
      if (rows[0]) {
        const sealed = rows[0].sealed_state;
        return { state: sealed === null ? null : (JSON.parse(this.secrets.open(sealed)) as BotSessionState), waited: tries > 1 };
      }
      const left = turn.deadline - Date.now();
      if (left <= 0) throw new SessionTurnTimeoutError();
      await sleep(Math.min(left, pause / 2 + Math.random() * pause));
      pause = Math.min(pause * 2, LAST_RETRY_MS);
    }
  }

  /** Renews the turn's lease while it runs, as a run's lease is renewed. */
  private keepClaimed(turn: SessionTurn): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.dataSource
        .query(
          `UPDATE bot_sessions SET turn_expires_at = now() + $4::integer * interval '1 millisecond'
           WHERE project_id = $1 AND session_id = $2 AND turn_holder = $3`,
          [turn.projectId, turn.sessionId, turn.holder, this.config.RUN_LEASE_MS],
        )
        .catch((error: unknown) => this.logger.warn({ err: error, sessionId: turn.sessionId }, 'could not renew a bot session turn'));
    }, Math.max(250, Math.floor(this.config.RUN_LEASE_MS / 3)));
    timer.unref();
    this.renewals.add(timer);
    return timer;
  }

  /** Saves the state and ends the turn in one statement; false when this turn no longer holds the session. */
  private async saveAndRelease(turn: SessionTurn, state: BotSessionState): Promise<boolean> {
    const rows: Array<{ saved: number }> = await this.dataSource.query(
      `WITH saved AS (
         UPDATE bot_sessions
            SET sealed_state = $4, revision = revision + 1, updated_at = now(), turn_holder = NULL, turn_expires_at = NULL
          WHERE project_id = $1 AND session_id = $2 AND turn_holder = $3
         RETURNING 1)
       SELECT count(*)::integer AS saved FROM saved`,
      [turn.projectId, turn.sessionId, turn.holder, this.secrets.seal(JSON.stringify(state))],
    );
    return rows[0]?.saved === 1;
  }

  private async release(turn: SessionTurn): Promise<void> {
    await this.dataSource.query(
      `UPDATE bot_sessions SET turn_holder = NULL, turn_expires_at = NULL
        WHERE project_id = $1 AND session_id = $2 AND turn_holder = $3`,
      [turn.projectId, turn.sessionId, turn.holder],
    );
  }

  /**
   * Runs `work` after every earlier call for the same key in this process has finished (telling
   * it whether there was one), or
   * throws `SessionTurnTimeoutError` when they have not by `deadline` (the next call still waits
   * for them: each call's tail follows the one before it).
   */
  private async inArrivalOrder<T>(key: string, deadline: number, work: (queued: boolean) => Promise<T>): Promise<T> {
    const earlier = this.tails.get(key);
    const previous = earlier ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => (done = resolve));
    const chained = previous.then(() => tail);
    this.tails.set(key, chained);
    let timer: NodeJS.Timeout | undefined;
    try {
      const inTime = await Promise.race([
        previous.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now())))),
      ]);
      if (!inTime) throw new SessionTurnTimeoutError();
      return await work(earlier !== undefined);
    } finally {
      clearTimeout(timer);
      done();
      if (this.tails.get(key) === chained) this.tails.delete(key);
    }
  }
}
