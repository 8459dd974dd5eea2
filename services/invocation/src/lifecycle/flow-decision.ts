/**
 * Flow control's decision (DESIGN section 13), pure: which slots a run needs (per-key
 * concurrency, per-key throttle) and, given what the database holds for them now, whether it
 * may start or what it waits for. The gate (runs/flow-gate.repository.ts) reads the state under
 * a lock of every slot involved, asks `decideStart`, and writes what it says in one transaction,
 * so the decision is exact across replicas.
 */
import type { CompiledFlowControl, FlowControlValues } from '@runline/engine';
import type { TargetType } from './invocation-event.js';

export const WAIT_REASONS = ['concurrency', 'throttle', 'debounce', 'project'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/** A per-key concurrency pool, or the project's (`maxConcurrentRuns`): at most `limit` runs holding it RUNNING. */
export interface ConcurrencySlot {
  kind: 'concurrency' | 'project';
  /** Unique across projects and targets: the lock and the holders' key. */
  slot: string;
  limit: number;
  /** The run's evaluated key, for `trace.flowControl.key`. */
  key: string;
}

/** A per-key throttle (GCRA): `limit` starts per `periodMs`, `burst` more at once. */
export interface ThrottleSlot {
  kind: 'throttle';
  slot: string;
  limit: number;
  periodMs: number;
  burst: number;
  key: string;
}

export type FlowSlot = ConcurrencySlot | ThrottleSlot;

/** A per-key debounce (async runs only): of a burst, only the last runs. */
export interface DebounceSlot {
  slot: string;
  periodMs: number;
  maxWaitMs: number | null;
  key: string;
}

/** What a run's start must respect; `rank` orders the runs waiting for one slot (lower first). */
export interface FlowRules {
  slots: FlowSlot[];
  debounce?: DebounceSlot;
  /** Enqueued time in epoch ms, moved ahead by the run's priority. */
  rank: number;
}

/** The slots of one run of `target` of `projectId`, from its trigger's flowControl and its evaluated values. */
export function flowRulesOf(
  projectId: string,
  target: TargetType,
  flowControl: CompiledFlowControl,
  values: FlowControlValues,
  queuedAt: number,
  debounces = true,
  maxConcurrentRuns: number | null = null,
): FlowRules {
  const scope = `${projectId}:${target}`;
  const projectSlots: FlowSlot[] = maxConcurrentRuns === null ? [] : [{ kind: 'project', slot: `p:${projectId}`, limit: maxConcurrentRuns, key: '' }];
  const slots: FlowSlot[] = [...projectSlots, ...flowControl.concurrency.map((entry, index): FlowSlot => {
    const key = values.concurrencyKeys[index] ?? '';
    return { kind: 'concurrency', slot: `c${index}:${scope}:${key}`, limit: entry.limit, key };
  })];
  if (flowControl.throttle) {
    const key = values.throttleKey ?? '';
    const { limit, periodSeconds, burst } = flowControl.throttle;
    slots.push({ kind: 'throttle', slot: `t:${scope}:${key}`, limit, periodMs: periodSeconds * 1000, burst, key });
  }
  const rank = queuedAt - values.prioritySeconds * 1000;
  if (!debounces || !flowControl.debounce) return { slots, rank };
  const key = values.debounceKey ?? '';
  const { periodSeconds, maxWaitSeconds } = flowControl.debounce;
  return { slots, rank, debounce: { slot: `d:${scope}:${key}`, periodMs: periodSeconds * 1000, maxWaitMs: maxWaitSeconds === undefined ? null : maxWaitSeconds * 1000, key } };
}

/** A run of an open debounce burst: when it joined. */
export interface BurstMember {
  invocationId: string;
  joinedAt: number;
}

export type DebounceStep =
  /** Not in a burst yet: it joins (and is its last run for now), to be tried again at `retryAt`. */
  | { step: 'join'; retryAt: number }
  /** In the burst, which is not over for it: a later run joined, or its time has not come (`retryAt`). */
  | { step: 'wait'; retryAt: number | null }
  /** The last run, and the burst is over: it goes on (to its other slots) and `superseded` end CANCELLED. */
  | { step: 'close'; superseded: string[] };

/**
 * Debounce of one run (`me`) given the open burst of its key (`members`, itself included once
 * it joined): the burst's last run goes on `periodMs` after the last one joined, or `maxWaitMs`
 * after the first, whichever is sooner; the others wait until then and are superseded by it.
 */
export function debounceStep(debounce: DebounceSlot, members: readonly BurstMember[], me: string, now: number): DebounceStep {
  const dueAt = (first: number, last: number) => Math.min(last + debounce.periodMs, debounce.maxWaitMs === null ? Infinity : first + debounce.maxWaitMs);
  const first = Math.min(now, ...members.map((member) => member.joinedAt));
  if (!members.some((member) => member.invocationId === me)) return { step: 'join', retryAt: dueAt(first, now) };
  const last = members.reduce((latest, member) => (member.joinedAt > latest.joinedAt || (member.joinedAt === latest.joinedAt && member.invocationId > latest.invocationId) ? member : latest));
  if (last.invocationId !== me) return { step: 'wait', retryAt: null };
  const due = dueAt(first, last.joinedAt);
  if (now < due) return { step: 'wait', retryAt: due };
  return { step: 'close', superseded: members.filter((member) => member.invocationId !== me).map((member) => member.invocationId) };
}

/** What the database holds for a run's slots, read under their locks. */
export interface SlotState {
  /** RUNNING holders per concurrency slot (absent = none). */
  running: ReadonlyMap<string, number>;
  /** Theoretical arrival time (epoch ms) per throttle slot (absent = never used). */
  throttleTat: ReadonlyMap<string, number>;
  /** A slot another run waits for with a lower rank (it goes first), if any. */
  waitedAheadOn: string | null;
}

export type StartDecision =
  | { start: true; throttleTat: Map<string, number> }
  | { start: false; reason: WaitReason; slot: string; key: string; retryAt: number | null };

/**
 * Whether a run with `rules` may start at `now`: no run ranked before it waits for one of its
 * slots, each concurrency slot has fewer than `limit` RUNNING, and each throttle conforms (GCRA
 * with a tolerance of `burst` emission intervals: at most limit + burst starts in any period).
 * When it starts, `throttleTat` holds each throttle's new arrival time to store.
 *
 * A throttle whose time comes within `aheadMs` after `now` counts as come: the run's start
 * takes that time in the throttle's account, so the spacing of starts stays exact (for a
 * caller that decides many runs within a millisecond, and writes them all before any starts).
 */
export function decideStart(rules: FlowRules, state: SlotState, now: number, aheadMs = 0): StartDecision {
  if (state.waitedAheadOn !== null) {
    const slot = rules.slots.find((one) => one.slot === state.waitedAheadOn)!;
    return { start: false, reason: slot.kind, slot: slot.slot, key: slot.key, retryAt: null };
  }
  const throttleTat = new Map<string, number>();
  for (const slot of rules.slots) {
    if (slot.kind !== 'throttle') {
      if ((state.running.get(slot.slot) ?? 0) >= slot.limit) return { start: false, reason: slot.kind, slot: slot.slot, key: slot.key, retryAt: null };
      continue;
    }
    const interval = slot.periodMs / slot.limit;
    const tat = Math.max(state.throttleTat.get(slot.slot) ?? now, now);
    const allowedAt = tat - slot.burst * interval;
    if (allowedAt > now + aheadMs) return { start: false, reason: 'throttle', slot: slot.slot, key: slot.key, retryAt: Math.ceil(allowedAt) };
    throttleTat.set(slot.slot, tat + interval);
  }
  return { start: true, throttleTat };
}

/** `trace.flowControl` of a run that waits. */
export interface WaitingTrace {
  waitingFor: WaitReason;
  key: string;
  since: string;
}

/** `trace.flowControl` of a run that started after flow control was applied to it. */
export interface StartedTrace {
  waitedMs: number;
  reasons: WaitReason[];
}

/** What a started run shows: how long it waited since it was first held back (0 when never), and for what. */
export function startedTrace(waitedSince: number | null, reasons: readonly WaitReason[], now: number): StartedTrace {
  return { waitedMs: waitedSince === null ? 0 : Math.max(0, now - waitedSince), reasons: [...new Set(reasons)] };
}
