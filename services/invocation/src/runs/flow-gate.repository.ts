/**
 * Flow control's gate in PostgreSQL (DESIGN section 13): the start of a run under flow control
 * is decided and written in ONE transaction that holds an advisory lock of each of its slots,
 * so the limits are exact across any number of replicas. Runs held back wait in `flow_waits`
 * (the backlog may be millions; nothing waits in memory) and are tried again by the
 * FlowDispatcher of any replica.
 */
import type { TransactionContext } from '@runline/db';
import { debounceStep, decideStart, startedTrace, type FlowRules, type SlotState, type WaitReason, type WaitingTrace } from '../lifecycle/flow-decision.js';
import { historyAppend, type HistoryAppend } from '../lifecycle/run-history.js';
import { debounced, type Expectation, type StateChange } from '../lifecycle/run-lifecycle.js';
import { transition } from './run-transitions.repository.js';

/** How a gated start went: started (the run is RUNNING under our lease), waiting, or the run had moved on. */
export type GateOutcome = 'started' | 'waiting' | 'moved-on';

export interface GatedClaim {
  invocationId: string;
  projectId: string;
  expected: Expectation;
  change: StateChange;
  /** The start's history, at the time the gate decided. */
  history: (at: Date) => HistoryAppend;
}

interface StateRow {
  kind: 'c' | 't' | 'w';
  slot: string;
  n: number;
  at: Date | null;
}

/**
 * Decides and writes the start of one run under `rules`. The time is the database's, read once
 * the locks are held: one clock for every replica, so a throttle holds across machines too.
 * A debounced run first takes its turn in its key's burst (`debounceStep`); the last run of a
 * closed burst goes on to its other slots, and the burst's other runs end CANCELLED here.
 */
export async function gateStart(tx: TransactionContext, claim: GatedClaim, rules: FlowRules): Promise<GateOutcome> {
  const { manager } = tx;
  const id = claim.invocationId;
  const slots = rules.slots.map((slot) => slot.slot);
  const concurrency = rules.slots.filter((slot) => slot.kind === 'concurrency' || slot.kind === 'project').map((slot) => slot.slot);
  const throttles = rules.slots.filter((slot) => slot.kind === 'throttle').map((slot) => slot.slot);
  const locked = rules.debounce ? [...slots, rules.debounce.slot] : slots;
  // One order for every transaction, so two runs sharing slots never wait for each other's locks in a circle.
  // The time is read once every lock is held (the aggregate needs all of them first).
  const [clock] = (await manager.query(
    `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now
       FROM (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended(s, 7132)) FROM unnest($1::text[]) AS s ORDER BY s) AS locks) AS locked`,
    [locked],
  )) as Array<{ now: number }>;
  const now = Math.floor(clock!.now);
  const [run]: Array<{ waiting: boolean; slot: string | null; reason: WaitReason | null; since: Date | null; reasons: WaitReason[] | null }> = await manager.query(
    `SELECT i.status = $2 AS waiting, w.slot, w.reason, w.since, w.reasons FROM invocations i LEFT JOIN flow_waits w ON w.invocation_id = i.id WHERE i.id = $1`,
    [id, claim.expected.status],
  );
  const mine = run?.slot ? { slot: run.slot, reason: run.reason!, since: run.since!, reasons: run.reasons! } : null;
  // Another replica may have started (or ended) the run since it was read: then it waits no more.
  if (!run?.waiting) {
    if (mine) await forgetWait(tx, id);
    return 'moved-on';
  }
  const wait = new WaitWriter(tx, claim, mine, now);

  // A run in a debounce burst (or joining one): only its last run goes on, once the burst is over.
  if (rules.debounce && (mine === null || mine.slot === rules.debounce.slot)) {
    const members: Array<{ invocation_id: string; since: Date }> = await manager.query(
      `SELECT w.invocation_id, w.since FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status WHERE w.slot = $1`,
      [rules.debounce.slot],
    );
    const joined = mine ? mine.since.getTime() : now;
    const step = debounceStep(
      rules.debounce,
      members.map((member) => ({ invocationId: member.invocation_id, joinedAt: member.invocation_id === id ? joined : member.since.getTime() })),
      id,
      now,
    );
    if (step.step === 'join') {
      await wait.record({ reason: 'debounce', slot: rules.debounce.slot, key: rules.debounce.key, retryAt: step.retryAt }, -now);
      return 'waiting';
    }
    if (step.step === 'wait') {
      if (step.retryAt !== null) await manager.query(`UPDATE flow_waits SET retry_at = $2 WHERE invocation_id = $1`, [id, new Date(step.retryAt)]);
      return 'waiting';
    }
    for (const superseded of step.superseded) {
      const ending = debounced(id);
      const document = await transition(tx, superseded, ending.expected, ending.change, historyAppend(ending, new Date(now)));
      if (document) await forgetWait(tx, superseded);
    }
    if (slots.length === 0) return wait.start();
  }

  if (concurrency.length > 0) {
    // Holders that ended give nothing back to write: they are only forgotten here, under the lock.
    await manager.query(
      `DELETE FROM flow_holders h USING invocations i
        WHERE h.slot = ANY($1::text[]) AND i.id = h.invocation_id AND i.status NOT IN ('RUNNING', 'SUSPENDED')`,
      [concurrency],
    );
  }
  const rows: StateRow[] = await manager.query(
    `SELECT 'c' AS kind, h.slot, count(*)::int AS n, NULL::timestamptz AS at
       FROM flow_holders h JOIN invocations i ON i.id = h.invocation_id AND i.status = 'RUNNING'
      WHERE h.slot = ANY($1::text[]) GROUP BY h.slot
     UNION ALL
     SELECT 't', slot, 0, tat FROM flow_throttles WHERE slot = ANY($2::text[])
     UNION ALL
     (SELECT 'w', w.slot, 0, NULL FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status
       WHERE w.slot = ANY($3::text[]) AND w.rank < $4 AND w.invocation_id <> $5 ORDER BY w.rank LIMIT 1)`,
    [concurrency, throttles, slots, rules.rank, id],
  );
  const state: SlotState = {
    running: new Map(rows.filter((row) => row.kind === 'c').map((row) => [row.slot, row.n])),
    throttleTat: new Map(rows.filter((row) => row.kind === 't').map((row) => [row.slot, row.at!.getTime()])),
    waitedAheadOn: rows.find((row) => row.kind === 'w')?.slot ?? null,
  };
  const decision = decideStart(rules, state, now);
  if (!decision.start) {
    if (mine && mine.slot === decision.slot && mine.reason === decision.reason) {
      if (decision.retryAt !== null) await manager.query(`UPDATE flow_waits SET retry_at = $2 WHERE invocation_id = $1`, [id, new Date(decision.retryAt)]);
      return 'waiting';
    }
    await wait.record(decision, rules.rank);
    return 'waiting';
  }
  return wait.start(concurrency, decision.throttleTat);
}

/** Writes what the gate decided for one run: its wait (and what its trace says), or its start. */
class WaitWriter {
  constructor(
    private readonly tx: TransactionContext,
    private readonly claim: GatedClaim,
    private readonly mine: { since: Date; reasons: WaitReason[] } | null,
    private readonly now: number,
  ) {}

  async record(wait: { reason: WaitReason; slot: string; key: string; retryAt: number | null }, rank: number): Promise<void> {
    const since = this.mine?.since ?? new Date(this.now);
    const reasons = [...new Set([...(this.mine?.reasons ?? []), wait.reason])];
    await this.tx.manager.query(
      `INSERT INTO flow_waits (invocation_id, project_id, slot, reason, rank, retry_at, from_status, waiting_job, since, reasons)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (invocation_id) DO UPDATE SET slot = EXCLUDED.slot, reason = EXCLUDED.reason, rank = EXCLUDED.rank, retry_at = EXCLUDED.retry_at, reasons = EXCLUDED.reasons`,
      [
        this.claim.invocationId,
        this.claim.projectId,
        wait.slot,
        wait.reason,
        rank,
        wait.retryAt === null ? null : new Date(wait.retryAt),
        this.claim.expected.status,
        this.claim.expected.waitingJob ?? null,
        since,
        reasons,
      ],
    );
    const trace: WaitingTrace = { waitingFor: wait.reason, key: wait.key, since: since.toISOString() };
    await setFlowTrace(this.tx, this.claim.invocationId, trace);
  }

  async start(concurrency: string[] = [], throttleTat: ReadonlyMap<string, number> = new Map()): Promise<GateOutcome> {
    const { manager } = this.tx;
    const id = this.claim.invocationId;
    const document = await transition(this.tx, id, this.claim.expected, this.claim.change, this.claim.history(new Date(this.now)));
    if (this.mine) await forgetWait(this.tx, id);
    if (!document) return 'moved-on';
    if (concurrency.length > 0) {
      await manager.query(`INSERT INTO flow_holders (slot, invocation_id) SELECT s, $2 FROM unnest($1::text[]) AS s ON CONFLICT DO NOTHING`, [concurrency, id]);
    }
    if (throttleTat.size > 0) {
      await manager.query(
        `INSERT INTO flow_throttles (slot, tat) SELECT s, to_timestamp(t / 1000.0) FROM unnest($1::text[], $2::float8[]) AS x(s, t)
         ON CONFLICT (slot) DO UPDATE SET tat = EXCLUDED.tat`,
        [[...throttleTat.keys()], [...throttleTat.values()]],
      );
    }
    await setFlowTrace(this.tx, id, startedTrace(this.mine ? this.mine.since.getTime() : null, this.mine?.reasons ?? [], this.now));
    return 'started';
  }
}

/** Sets `trace.flowControl` of the run's read model (the trace of the attempt keeps it: invocation.projector.ts). */
async function setFlowTrace(tx: TransactionContext, invocationId: string, flowControl: object): Promise<void> {
  await tx.manager.query(
    `UPDATE invocation_views
        SET document = jsonb_set(document, '{trace}',
              (CASE WHEN jsonb_typeof(document->'trace') = 'object' THEN document->'trace' ELSE '{}'::jsonb END)
              || jsonb_build_object('flowControl', $2::jsonb))
      WHERE id = $1`,
    [invocationId, JSON.stringify(flowControl)],
  );
}

/** Forgets the wait of a run that was ended while it waited. */
export async function forgetWait(tx: TransactionContext, invocationId: string): Promise<void> {
  await tx.manager.query(`DELETE FROM flow_waits WHERE invocation_id = $1`, [invocationId]);
}

/** Forgets the wait of a run that no longer waits (started elsewhere, failed as it came up, deleted). */
export async function forgetIfGone(manager: TransactionContext['manager'], invocationId: string): Promise<void> {
  await manager.query(
    `DELETE FROM flow_waits w WHERE w.invocation_id = $1
        AND NOT EXISTS (SELECT 1 FROM invocations i WHERE i.id = w.invocation_id AND i.status = w.from_status)`,
    [invocationId],
  );
}

/** A run waiting for a start, as the dispatcher tries it again. */
export interface WaitingStart {
  invocationId: string;
  fromStatus: string;
  waitingJob: string | null;
}

/**
 * The runs worth trying now: the first-ranked run waiting for each slot (a run behind it could
 * not start before it anyway), of throttles only once their time came. At most `limit`.
 */
export async function nextWaitingStarts(manager: TransactionContext['manager'], limit: number): Promise<WaitingStart[]> {
  const rows: Array<{ invocation_id: string; from_status: string; waiting_job: string | null }> = await manager.query(
    `SELECT invocation_id, from_status, waiting_job FROM (
       SELECT DISTINCT ON (slot) invocation_id, from_status, waiting_job, retry_at, rank FROM flow_waits ORDER BY slot, rank
     ) heads
     WHERE retry_at IS NULL OR retry_at <= now()
     ORDER BY rank LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({ invocationId: row.invocation_id, fromStatus: row.from_status, waitingJob: row.waiting_job }));
}

/** Runs waiting now, by what they wait for (the metric `runline_runs_waiting{reason}`). */
export async function waitingByReason(manager: TransactionContext['manager']): Promise<Map<string, number>> {
  const rows: Array<{ reason: string; n: number }> = await manager.query(
    `SELECT w.reason, count(*)::int AS n FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status GROUP BY w.reason`,
  );
  return new Map(rows.map((row) => [row.reason, row.n]));
}
