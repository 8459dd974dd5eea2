/**
 * Flow control's gate in PostgreSQL (DESIGN section 13): the start of a run under flow control
 * is decided and written in ONE transaction that holds an advisory lock of each of its slots,
 * so the limits are exact across any number of replicas. Runs held back wait in `flow_waits`
 * (the backlog may be millions; nothing waits in memory) and are tried again by the
 * FlowDispatcher of any replica.
 */
import type { TransactionContext } from '@runline/db';
import { debounceStep, decideStart, startedTrace, type FlowRules, type StartedTrace, type WaitReason, type WaitingTrace } from '../lifecycle/flow-decision.js';
import { keepFlowControl } from '../lifecycle/invocation.projector.js';
import { historyAppend, type HistoryAppend } from '../lifecycle/run-history.js';
import { debounced, type Expectation, type StateChange } from '../lifecycle/run-lifecycle.js';
import { columnsOf } from './sql-rows.js';
import { transition, transitionMany, type KnownRun, type Transitioning } from './run-transitions.repository.js';

/** How a gated start went: started (the run is RUNNING under our lease), waiting, or the run had moved on. */
export type GateOutcome = 'started' | 'waiting' | 'moved-on';

/** A gated start's outcome, and the run as its start wrote it (when it started): its next transition needs no read. */
export interface GateResult {
  outcome: GateOutcome;
  started: KnownRun | null;
}

const WAITING: GateResult = { outcome: 'waiting', started: null };
const MOVED_ON: GateResult = { outcome: 'moved-on', started: null };

export interface GatedClaim {
  invocationId: string;
  projectId: string;
  expected: Expectation;
  change: StateChange;
  /** The start's history, at the time the gate decided. */
  history: (at: Date) => HistoryAppend;
}

/**
 * A row of a slot's state, `n` being its RUNNING holders ('c'), its throttle's time in epoch ms
 * to the microsecond ('t'; a Date would cut it to the millisecond, and each start read so
 * would take up to a millisecond of the throttle's spacing), or the lowest rank waiting ('w').
 */
interface StateRow {
  kind: 'c' | 't' | 'w';
  slot: string;
  n: number;
}

/** A run's start to decide, under its rules. */
export interface GateEntry {
  claim: GatedClaim;
  rules: FlowRules;
}

/** A run as the gate finds it once the locks are held: whether it still waits to start, and its recorded wait. */
interface FoundRun {
  waiting: boolean;
  mine: RecordedWait | null;
}

interface RecordedWait {
  slot: string;
  reason: WaitReason;
  since: Date;
  reasons: WaitReason[];
}

/**
 * Decides and writes the starts of several runs without debounce, in one transaction: the
 * slots of all of them are locked once and their state read once, and the runs are decided in
 * rank order, each seeing the ones decided before it (a start takes a concurrency slot and moves
 * its throttle on; a run held back goes ahead of the later-ranked ones waiting for its slot).
 * The same as deciding them one after the other, at the cost of one: starts of one project
 * under its `maxConcurrentRuns`, or of one key, otherwise wait for each other's locks in turn.
 */
export async function gateStarts(tx: TransactionContext, entries: readonly GateEntry[]): Promise<GateResult[]> {
  if (entries.some((entry) => entry.rules.debounce)) throw new Error('gateStarts decides runs without debounce only');
  const clock = await lockSlots(tx, entries.flatMap((entry) => entry.rules.slots.map((slot) => slot.slot)));
  return decideInRankOrder(tx, entries, await readRunsAndSlots(tx, entries), clock);
}

/**
 * Decides and writes the start of one run under `rules`. The time is the database's, read once
 * the locks are held: one clock for every replica, so a throttle holds across machines too.
 * A debounced run first takes its turn in its key's burst (`debounceStep`); the last run of a
 * closed burst goes on to its other slots, and the burst's other runs end CANCELLED here.
 */
export async function gateStart(tx: TransactionContext, claim: GatedClaim, rules: FlowRules): Promise<GateResult> {
  const { manager } = tx;
  const id = claim.invocationId;
  const slots = rules.slots.map((slot) => slot.slot);
  const clock = await lockSlots(tx, rules.debounce ? [...slots, rules.debounce.slot] : slots);
  const reading = await readRunsAndSlots(tx, [{ claim, rules }]);
  const { found } = reading;
  const { waiting, mine } = found.get(id)!;
  if (!waiting || !rules.debounce || (mine !== null && mine.slot !== rules.debounce.slot)) return (await decideInRankOrder(tx, [{ claim, rules }], reading, clock))[0]!;
  const now = Math.floor(clock());

  // A run in a debounce burst (or joining one): only its last run goes on, once the burst is over.
  const writes = new GateWrites(tx);
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
    writes.wait(claim, mine, now, { reason: 'debounce', slot: rules.debounce.slot, key: rules.debounce.key, retryAt: step.retryAt }, -now);
    await writes.flush();
    return WAITING;
  }
  if (step.step === 'wait') {
    if (step.retryAt !== null) writes.retry(id, step.retryAt);
    await writes.flush();
    return WAITING;
  }
  for (const superseded of step.superseded) {
    const ending = debounced(id);
    const document = await transition(tx, superseded, ending.expected, ending.change, historyAppend(ending, new Date(now)));
    if (document) await forgetWait(tx, superseded);
  }
  return (await decideInRankOrder(tx, [{ claim, rules }], reading, clock))[0]!;
}

/**
 * How far ahead of its clock the gate may decide a throttled start (ms): a batch's runs are
 * decided within a fraction of a millisecond and all start when its transaction commits, after
 * its writes, so a throttle of thousands a second with burst 0 would otherwise let one of them
 * start per batch (its next time being microseconds away). Each start still takes its own time
 * in the throttle's account, so no period ever holds more than limit + burst starts there.
 */
const DECIDE_AHEAD_MS = 1;

/**
 * The time of a decision, in epoch ms with a fraction: the database's, read once the locks are
 * held (one clock for every replica, so a throttle holds across machines too), carried on by
 * this process's monotonic clock, so each run decided in a transaction is decided at its own
 * time. Not rounded to the millisecond: a throttle of thousands a second spaces starts a
 * fraction of one apart, and two runs decided at one rounded time would be two starts at once
 * (the second held back, with burst 0).
 */
type GateClock = () => number;

/**
 * Takes the transaction-level lock of each slot, in one order for every transaction (so two
 * runs sharing slots never wait for each other's locks in a circle), and reads the database's
 * time once every lock is held (the aggregate needs all of them first). The transaction that
 * takes these locks next reads a later time than any decision of this one.
 */
async function lockSlots(tx: TransactionContext, slots: readonly string[]): Promise<GateClock> {
  const [clock] = (await tx.manager.query(
    `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now
       FROM (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(hashtextextended(s, 7132)) FROM unnest($1::text[]) AS s ORDER BY s) AS locks) AS locked`,
    [[...new Set(slots)]],
  )) as Array<{ now: number }>;
  const lockedAt = performance.now();
  return () => clock!.now + (performance.now() - lockedAt);
}

/**
 * Decides the runs' starts against their slots' state, read once, in rank order; then writes
 * every run's start or wait (GateWrites), and what the starts took (holders, throttle times).
 */
async function decideInRankOrder(tx: TransactionContext, entries: readonly GateEntry[], { found, state }: GateReading, clock: GateClock): Promise<GateResult[]> {
  const { manager } = tx;
  const writes = new GateWrites(tx);
  const outcomes = new Map<GateEntry, GateResult>();
  const seen = new Set<string>();
  const deciding = entries.filter((entry) => {
    const id = entry.claim.invocationId;
    const run = found.get(id)!;
    // A run submitted twice is decided once: its other submission says how it went.
    const waiting = run.waiting && !seen.has(id);
    seen.add(id);
    if (!waiting) {
      outcomes.set(entry, MOVED_ON);
      // A run that moved on waits no more.
      if (!run.waiting && run.mine) writes.forget(id);
    }
    return waiting;
  });

  const starting: Array<{ entry: GateEntry; concurrency: string[] }> = [];
  for (const entry of [...deciding].sort((a, b) => a.rules.rank - b.rules.rank)) {
    const { claim, rules } = entry;
    const mine = found.get(claim.invocationId)!.mine;
    const concurrency = rules.slots.filter((slot) => slot.kind === 'concurrency' || slot.kind === 'project').map((slot) => slot.slot);
    const now = clock();
    const decision = decideStart(rules, { running: state.running, throttleTat: state.throttleTat, waitedAheadOn: state.aheadOf(rules) }, now, DECIDE_AHEAD_MS);
    if (!decision.start) {
      outcomes.set(entry, WAITING);
      state.heldBack(decision.slot, rules.rank);
      if (mine && mine.slot === decision.slot && mine.reason === decision.reason) {
        if (decision.retryAt !== null) writes.retry(claim.invocationId, decision.retryAt);
      } else {
        writes.wait(claim, mine, Math.floor(now), decision, rules.rank);
      }
      continue;
    }
    // Counted as started for the runs decided after it, before its write: a run that moved on
    // meanwhile (ended by another process since readRunsAndSlots) leaves its place unused until the
    // dispatcher's next look, never a place too many.
    writes.start(claim, mine, Math.floor(now));
    starting.push({ entry, concurrency });
    state.started(concurrency, decision.throttleTat);
  }
  const started = await writes.flush();
  const holders: Array<{ slot: string; invocationId: string }> = [];
  starting.forEach(({ entry, concurrency }, index) => {
    const run = started[index]!;
    outcomes.set(entry, run ? { outcome: 'started', started: run } : MOVED_ON);
    if (run) for (const slot of concurrency) holders.push({ slot, invocationId: entry.claim.invocationId });
  });
  if (holders.length > 0 || state.throttlesMoved.size > 0) {
    const moved = [...state.throttlesMoved].map((slot) => [slot, state.throttleTat.get(slot)!] as const);
    await manager.query(
      `WITH held AS (
         INSERT INTO flow_holders (slot, invocation_id) SELECT * FROM unnest($1::text[], $2::uuid[]) ON CONFLICT DO NOTHING
       )
       INSERT INTO flow_throttles (slot, tat) SELECT s, to_timestamp(t / 1000.0) FROM unnest($3::text[], $4::float8[]) AS x(s, t)
       ON CONFLICT (slot) DO UPDATE SET tat = EXCLUDED.tat`,
      [holders.map((holder) => holder.slot), holders.map((holder) => holder.invocationId), moved.map(([slot]) => slot), moved.map(([, tat]) => tat)],
    );
  }
  return entries.map((entry) => outcomes.get(entry)!);
}

/** What the database holds for the slots of the runs being decided, kept up to date as each is decided. */
class SlotStateInDecision {
  /** Throttles a start moved on: their new times are written once every run is decided. */
  readonly throttlesMoved = new Set<string>();

  constructor(
    readonly running: Map<string, number>,
    readonly throttleTat: Map<string, number>,
    /** Per slot, the lowest rank of a run waiting for it (not one being decided, until it is held back). */
    private readonly waitingRank: Map<string, number>,
  ) {}

  /** A run started: it holds `concurrency` and moved its throttles to `throttleTat`. */
  started(concurrency: readonly string[], throttleTat: ReadonlyMap<string, number>): void {
    for (const slot of concurrency) this.running.set(slot, (this.running.get(slot) ?? 0) + 1);
    for (const [slot, tat] of throttleTat) {
      this.throttleTat.set(slot, tat);
      this.throttlesMoved.add(slot);
    }
  }

  /** A slot a run ranked before `rules` waits for (the one whose first waiter ranks lowest), if any. */
  aheadOf(rules: FlowRules): string | null {
    let ahead: { slot: string; rank: number } | null = null;
    for (const { slot } of rules.slots) {
      const rank = this.waitingRank.get(slot);
      if (rank !== undefined && rank < rules.rank && (ahead === null || rank < ahead.rank)) ahead = { slot, rank };
    }
    return ahead?.slot ?? null;
  }

  /** A run ranked `rank` was held back waiting for `slot`: it goes ahead of later ranks there. */
  heldBack(slot: string, rank: number): void {
    const lowest = this.waitingRank.get(slot);
    if (lowest === undefined || rank < lowest) this.waitingRank.set(slot, rank);
  }
}

/** What the gate reads once its locks are held: each run as it is now, and its slots' state. */
interface GateReading {
  found: Map<string, FoundRun>;
  state: SlotStateInDecision;
}

/**
 * Reads, in one statement under the slots' locks, each run as it is now (another replica may
 * have started or ended it since it was read), and its slots' state: RUNNING holders per
 * concurrency slot (those that ended give nothing back to write: they are only forgotten here),
 * each throttle's time, and per slot the lowest rank of a run waiting for it other than these.
 */
async function readRunsAndSlots(tx: TransactionContext, entries: readonly GateEntry[]): Promise<GateReading> {
  const all = entries.flatMap((entry) => entry.rules.slots);
  const concurrency = [...new Set(all.filter((slot) => slot.kind === 'concurrency' || slot.kind === 'project').map((slot) => slot.slot))];
  const throttles = [...new Set(all.filter((slot) => slot.kind === 'throttle').map((slot) => slot.slot))];
  const slots = [...new Set(all.map((slot) => slot.slot))];
  const [reading] = (await tx.manager.query(
    `WITH ended AS (
       DELETE FROM flow_holders h USING invocations i
        WHERE h.slot = ANY($3::text[]) AND i.id = h.invocation_id AND i.status NOT IN ('RUNNING', 'SUSPENDED')
     ), runs AS (
       SELECT x.id, i.status = x.expected AS waiting, w.slot, w.reason, (extract(epoch FROM w.since) * 1000)::float8 AS since, w.reasons
         FROM unnest($1::uuid[], $2::text[]) AS x(id, expected)
         LEFT JOIN invocations i ON i.id = x.id LEFT JOIN flow_waits w ON w.invocation_id = x.id
     ), state AS (
       SELECT 'c' AS kind, h.slot, count(*)::float8 AS n
         FROM flow_holders h JOIN invocations i ON i.id = h.invocation_id AND i.status = 'RUNNING'
        WHERE h.slot = ANY($3::text[]) GROUP BY h.slot
       UNION ALL
       SELECT 't', slot, (extract(epoch FROM tat) * 1000)::float8 FROM flow_throttles WHERE slot = ANY($4::text[])
       UNION ALL
       SELECT 'w', w.slot, min(w.rank)::float8 FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status
        WHERE w.slot = ANY($5::text[]) AND w.invocation_id <> ALL($1::uuid[]) GROUP BY w.slot
     )
     SELECT (SELECT coalesce(json_agg(runs), '[]') FROM runs) AS runs, (SELECT coalesce(json_agg(state), '[]') FROM state) AS state`,
    [entries.map((entry) => entry.claim.invocationId), entries.map((entry) => entry.claim.expected.status), concurrency, throttles, slots],
  )) as Array<{ runs: RunRow[]; state: StateRow[] }>;
  const { runs, state } = reading!;
  return {
    found: new Map(runs.map((row) => [row.id, { waiting: row.waiting === true, mine: row.slot ? { slot: row.slot, reason: row.reason!, since: new Date(row.since!), reasons: row.reasons! } : null }])),
    state: new SlotStateInDecision(
      new Map(state.filter((row) => row.kind === 'c').map((row) => [row.slot, row.n])),
      new Map(state.filter((row) => row.kind === 't').map((row) => [row.slot, row.n])),
      new Map(state.filter((row) => row.kind === 'w').map((row) => [row.slot, row.n])),
    ),
  };
}

/** A run as `readRunsAndSlots` finds it: whether it still waits as expected, and its recorded wait (since in epoch ms). */
interface RunRow {
  id: string;
  waiting: boolean | null;
  slot: string | null;
  reason: WaitReason | null;
  since: number | null;
  reasons: WaitReason[] | null;
}

/** A run's wait as `flow_waits` holds it, with what its trace says. */
interface WaitRow {
  claim: GatedClaim;
  slot: string;
  reason: WaitReason;
  rank: number;
  retryAt: number | null;
  since: Date;
  reasons: WaitReason[];
  trace: WaitingTrace;
}

/**
 * What the gate decided for its runs, written in a few statements however many runs it decided
 * (one statement a kind, not one a run: a batch's runs all wait for its slots' locks): their
 * starts (transitionMany, each run's read model saying how long it waited), waits, throttle
 * retry times, and waits forgotten.
 */
class GateWrites {
  private readonly starts: Transitioning[] = [];
  private readonly waits = new Map<string, WaitRow>();
  private readonly retries = new Map<string, Date>();
  private readonly forgotten = new Set<string>();

  constructor(private readonly tx: TransactionContext) {}

  /** Records the run waiting, for `wait.reason` (joining the reasons it waited for before). */
  wait(claim: GatedClaim, mine: RecordedWait | null, now: number, wait: { reason: WaitReason; slot: string; key: string; retryAt: number | null }, rank: number): void {
    const since = mine?.since ?? new Date(now);
    const reasons = [...new Set([...(mine?.reasons ?? []), wait.reason])];
    const trace: WaitingTrace = { waitingFor: wait.reason, key: wait.key, since: since.toISOString() };
    this.waits.set(claim.invocationId, { claim, slot: wait.slot, reason: wait.reason, rank, retryAt: wait.retryAt, since, reasons, trace });
  }

  /** The run waits on for what it waited for, and may be tried again at `retryAt` (a throttle's time). */
  retry(invocationId: string, retryAt: number): void {
    this.retries.set(invocationId, new Date(retryAt));
  }

  forget(invocationId: string): void {
    this.forgotten.add(invocationId);
  }

  /** Starts the run; `flush` says whether it did. */
  start(claim: GatedClaim, mine: RecordedWait | null, now: number): void {
    const flowControl = startedTrace(mine ? mine.since.getTime() : null, mine?.reasons ?? [], now);
    const history = withFlowTrace(claim.history(new Date(now)), flowControl);
    this.starts.push({ invocationId: claim.invocationId, expected: claim.expected, change: claim.change, history });
    if (mine) this.forgotten.add(claim.invocationId);
  }

  /** Writes it all; resolves with each start's run as written (null: it had moved on), in the order of `start`. */
  async flush(): Promise<Array<KnownRun | null>> {
    const { manager } = this.tx;
    const started = this.starts.length > 0 ? await transitionMany(this.tx, this.starts) : [];
    if (this.forgotten.size > 0) await manager.query(`DELETE FROM flow_waits WHERE invocation_id = ANY($1::uuid[])`, [[...this.forgotten]]);
    if (this.retries.size > 0) {
      await manager.query(`UPDATE flow_waits w SET retry_at = u.retry_at FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, retry_at) WHERE w.invocation_id = u.id`, [
        [...this.retries.keys()],
        [...this.retries.values()],
      ]);
    }
    if (this.waits.size > 0) await this.recordWaits([...this.waits.values()]);
    return started;
  }

  private async recordWaits(waits: readonly WaitRow[]): Promise<void> {
    const { manager } = this.tx;
    await manager.query(
      `INSERT INTO flow_waits (invocation_id, project_id, slot, reason, rank, retry_at, from_status, waiting_job, since, reasons)
       SELECT w.invocation_id, w.project_id, w.slot, w.reason, w.rank, w.retry_at, w.from_status, w.waiting_job, w.since, string_to_array(w.reasons, ',')
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int8[], $6::timestamptz[], $7::text[], $8::text[], $9::timestamptz[], $10::text[])
              AS w(invocation_id, project_id, slot, reason, rank, retry_at, from_status, waiting_job, since, reasons)
       ON CONFLICT (invocation_id) DO UPDATE SET slot = EXCLUDED.slot, reason = EXCLUDED.reason, rank = EXCLUDED.rank, retry_at = EXCLUDED.retry_at, reasons = EXCLUDED.reasons`,
      columnsOf(waits, 10, (wait) => [
        wait.claim.invocationId,
        wait.claim.projectId,
        wait.slot,
        wait.reason,
        wait.rank,
        wait.retryAt === null ? null : new Date(wait.retryAt),
        wait.claim.expected.status,
        wait.claim.expected.waitingJob ?? null,
        wait.since,
        // A reason is one word (WAIT_REASONS): joined, a text column of unnest, not an array of arrays.
        wait.reasons.join(','),
      ]),
    );
    await setFlowTraces(this.tx, waits.map((wait) => ({ invocationId: wait.claim.invocationId, flowControl: wait.trace })));
  }
}

/** `history`, whose read model also carries `trace.flowControl` (the trace of the attempt keeps it: invocation.projector.ts). */
function withFlowTrace(history: HistoryAppend, flowControl: StartedTrace): HistoryAppend {
  return {
    eventCount: history.eventCount,
    at: history.at,
    onto(owner, sequenceBefore, documentBefore) {
      const appended = history.onto(owner, sequenceBefore, documentBefore);
      const document = appended.document && { ...appended.document, trace: keepFlowControl({ flowControl: { ...flowControl } }, appended.document.trace) };
      return { ...appended, document };
    },
  };
}

/** Sets `trace.flowControl` of each run's read model (the trace of the attempt keeps it: invocation.projector.ts). */
async function setFlowTraces(tx: TransactionContext, traces: ReadonlyArray<{ invocationId: string; flowControl: object }>): Promise<void> {
  await tx.manager.query(
    `UPDATE invocation_views v
        SET document = jsonb_set(v.document, '{trace}',
              (CASE WHEN jsonb_typeof(v.document->'trace') = 'object' THEN v.document->'trace' ELSE '{}'::jsonb END)
              || jsonb_build_object('flowControl', u.flow_control))
       FROM unnest($1::uuid[], $2::jsonb[]) AS u(id, flow_control)
      WHERE v.id = u.id`,
    [traces.map((trace) => trace.invocationId), traces.map((trace) => JSON.stringify(trace.flowControl))],
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

/** What the dispatcher looks at: the runs worth trying now, and when the next throttle's time comes. */
export interface WaitingStarts {
  runs: WaitingStart[];
  /** Milliseconds until the earliest first-ranked run of a slot may be tried (a throttle's time), if one waits for its time. */
  nextInMs: number | null;
}

/**
 * The runs worth trying now, at most `limit`, lowest rank first: of each slot whose first-ranked
 * waiting run may be tried (of a throttle, once its time came), that run and up to
 * `perSlot - 1` behind it. They are decided together in rank order (gateStarts), so a slot that
 * freed many places fills them in one look, not one run a look. And how long until the next
 * slot's first run may be tried, so a throttle's runs start as their time comes.
 */
export async function nextWaitingStarts(manager: TransactionContext['manager'], limit: number, perSlot: number): Promise<WaitingStarts> {
  const rows: Array<{ invocation_id: string | null; from_status: string | null; waiting_job: string | null; rank: string | null; next_in_ms: number | null }> = await manager.query(
    `WITH heads AS (
       SELECT DISTINCT ON (slot) slot, retry_at FROM flow_waits ORDER BY slot, rank
     ), due AS (
       SELECT next.invocation_id, next.from_status, next.waiting_job, next.rank FROM heads
       CROSS JOIN LATERAL (SELECT w.invocation_id, w.from_status, w.waiting_job, w.rank FROM flow_waits w WHERE w.slot = heads.slot ORDER BY w.rank LIMIT $2) next
        WHERE heads.retry_at IS NULL OR heads.retry_at <= now()
        ORDER BY next.rank LIMIT $1
     )
     SELECT invocation_id, from_status, waiting_job, rank, NULL::float8 AS next_in_ms FROM due
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, (extract(epoch FROM min(retry_at) - now()) * 1000)::float8 FROM heads WHERE retry_at > now()`,
    [limit, perSlot],
  );
  const runs = rows
    .filter((row) => row.invocation_id !== null)
    .sort((a, b) => Number(a.rank) - Number(b.rank))
    .map((row) => ({ invocationId: row.invocation_id!, fromStatus: row.from_status!, waitingJob: row.waiting_job }));
  return { runs, nextInMs: rows.find((row) => row.invocation_id === null)?.next_in_ms ?? null };
}

/** Milliseconds until the earliest time a waiting run is worth trying again (a throttle's), if one has such a time. */
export async function earliestRetryInMs(manager: TransactionContext['manager']): Promise<number | null> {
  const [row]: Array<{ next_in_ms: number | null }> = await manager.query(
    `SELECT (extract(epoch FROM min(retry_at) - now()) * 1000)::float8 AS next_in_ms FROM flow_waits WHERE retry_at > now()`,
  );
  return row?.next_in_ms ?? null;
}

/** Runs waiting now, by what they wait for (the metric `runline_runs_waiting{reason}`). */
export async function waitingByReason(manager: TransactionContext['manager']): Promise<Map<string, number>> {
  const rows: Array<{ reason: string; n: number }> = await manager.query(
    `SELECT w.reason, count(*)::int AS n FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status GROUP BY w.reason`,
  );
  return new Map(rows.map((row) => [row.reason, row.n]));
}
