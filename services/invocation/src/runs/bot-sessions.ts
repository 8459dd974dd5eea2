import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RunVars } from '@runline/engine';
import { SecretBox } from '@runline/runtime';

/** What a conversation keeps between messages. */
export interface BotSessionState {
  /** Published version the state belongs to; a new version starts the conversation afresh at an `ask`. */
  version: number;
  vars: RunVars;
  /** Set when the bot asked a question: the session's next message answers it. */
  waitingAt: { nodeId: string; saveAs: string | null } | null;
}

/**
 * Bot conversations: one row per (project, session id), state sealed at rest. Messages of one
 * session are handled one at a time in this process (`exclusive`), so an answer always sees the
 * state the previous message left.
 */
@Injectable()
export class BotSessions {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  /** Runs `work` after every earlier `exclusive` call for the same session has finished. */
  async exclusive<T>(projectId: string, sessionId: string, work: () => Promise<T>): Promise<T> {
    const key = `${projectId}\u0000${sessionId}`;
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    const chained = previous.then(() => tail);
    this.tails.set(key, chained);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === chained) this.tails.delete(key);
    }
  }

  async load(projectId: string, sessionId: string): Promise<BotSessionState | null> {
    const rows: Array<{ sealed_state: string }> = await this.dataSource.query(
      'SELECT sealed_state FROM bot_sessions WHERE project_id = $1 AND session_id = $2',
      [projectId, sessionId],
    );
    return rows[0] ? (JSON.parse(this.secrets.open(rows[0].sealed_state)) as BotSessionState) : null;
  }

  async save(projectId: string, sessionId: string, state: BotSessionState): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO bot_sessions (project_id, session_id, sealed_state) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, session_id) DO UPDATE
         SET sealed_state = EXCLUDED.sealed_state, revision = bot_sessions.revision + 1, updated_at = now()`,
      [projectId, sessionId, this.secrets.seal(JSON.stringify(state))],
    );
  }
}
