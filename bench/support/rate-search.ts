import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile, runAtRate, type RateRun } from './constant-rate.js';
import type { RssSampler } from './rss-sampler.js';
import type { SustainedSystem, WorkCounts } from './sustained-systems.js';

/** A rate is held when the accept p99 stays within this (the issue's limit; `p99LimitMs` may raise it)... */
export const ACCEPT_P99_LIMIT_MS = 25;
/** ...and the work still open when the load stops is at most this many seconds of arrivals. */
export const BACKLOG_LIMIT_SECONDS = 2;
/** Fewer answers than this share of rate x seconds: the system did not take the rate offered. */
const ANSWERED_SHARE = 0.95;
const DRAIN_POLL_MS = 250;

export interface SearchSettings {
  stepSeconds: number;
  holdSeconds: number;
  startRate: number;
  maxRate: number;
  /** Rates to try instead of the doubling search, ascending. */
  rates: number[] | undefined;
  bisections: number;
  drainTimeoutMs: number;
  /** ACCEPT_P99_LIMIT_MS unless raised, to find throughput limits on a machine too loaded for latency. */
  p99LimitMs: number;
  /**
   * With a `fresh` system to be had: every step of the search, not only the hold, runs on a
   * system started anew after a warm-up at half its rate. Otherwise a step's verdict depends on
   * the steps before it (the same search once failed 600/s and 500/s right after 800/s missed
   * its p99 by 0.11 ms: tables, streams and heaps grown by 60,000 runs).
   */
  freshSteps: boolean;
}

/** What draining the backlog of one step took. */
export interface Drain {
  /** Every run had finished before the timeout. */
  done: boolean;
  seconds: number;
  executed: number;
}

/** One load at one rate, and what it left. */
export interface Step {
  rate: number;
  seconds: number;
  run: RateRun;
  /** Answers with the expected status per second of load. */
  acceptedPerSecond: number;
  p50: number;
  p99: number;
  /** The worst p99 of the load's 10-second windows. */
  worstWindowP99: number;
  openAtEnd: number;
  /** Work that reached a final state while the load ran, per second. */
  finishedPerSecond: number;
  drain: Drain;
  /** Final states other than success, over the step. */
  notSucceeded: number;
  /** Peak RSS (bytes) of each of the system's processes during the step and its drain. */
  peakRss: number[];
  /** CPU seconds each of the system's processes used during the load, and the whole machine's (every process, the load generator, PostgreSQL and NATS included). */
  cpuSeconds: { processes: number[]; machine: number };
  held: boolean;
  /** Held but for the p99: every answer 202, the rate answered, the backlog bounded. */
  keptUp: boolean;
  /** Why not held; empty when held. */
  why: string[];
  /** The machine's 1-minute load average when the step began (2 cores: above 2 means waiting for CPU). */
  loadAverage: number;
}

export interface SearchResult {
  steps: Step[];
  /** The hold at the highest rate held for the hold's length; undefined when none held. */
  hold: Step | undefined;
  /** Why the search ended early, if it did. */
  aborted?: string;
}

/** A system started anew for the hold, with the sampler of its processes. */
export interface FreshSystem {
  system: SustainedSystem;
  sampler: RssSampler;
}

/** The load a fresh system gets, at half the rate, before it is judged (its code compiled, its pools open). */
const WARM_UP_SECONDS = 10;

/**
 * Finds the highest arrival rate `system` holds: doubling from `startRate` until a rate is not
 * held (or halving until one is), a few bisections between the last held rate and the first
 * not held, each at `stepSeconds`; then the rate found is held for `holdSeconds` (stepping
 * down 15% at a time, at most twice, if it is not held that long). Between loads the backlog
 * is drained, so no load starts with work left over. With `fresh`, each attempt at the hold
 * (and with `freshSteps` every step) runs on a system started anew, after a warm-up at half
 * the rate: what the search's overloads or an earlier attempt leave behind (a
 * bloated job table, grown heaps) must not decide it.
 */
export async function searchHeldRate(
  system: SustainedSystem,
  sampler: RssSampler,
  settings: SearchSettings,
  log: (line: string) => void,
  fresh?: () => Promise<FreshSystem>,
): Promise<SearchResult> {
  const steps: Step[] = [];
  let on: FreshSystem = { system, sampler };
  let used = false;
  /**
   * `onFresh` (and a `fresh` to be had): on a system started anew for this load (the first load
   * takes the one given, started for it), warmed up at half `rate` first, not judged.
   */
  const test = async (rate: number, seconds: number, onFresh = settings.freshSteps): Promise<Step> => {
    if (onFresh && fresh) {
      if (used) on = await fresh();
      const warmUp = await loadStep(on.system, on.sampler, roundRate(rate / 2), WARM_UP_SECONDS, settings);
      log(`warm-up of the fresh system, not judged: ${describeStep(warmUp)}`);
    }
    used = true;
    const result = await loadStep(on.system, on.sampler, rate, seconds, settings);
    steps.push(result);
    log(describeStep(result));
    if (!result.drain.done) throw new SearchAborted(`the backlog of ${rate}/s did not drain within ${settings.drainTimeoutMs / 1000} s`);
    return result;
  };
  let held: number | undefined;
  try {
    if (settings.rates) {
      for (const rate of settings.rates) if ((await test(rate, settings.stepSeconds)).held) held = rate;
    } else {
      let failed: number | undefined;
      let rate = settings.startRate;
      for (;;) {
        if ((await test(rate, settings.stepSeconds)).held) {
          held = rate;
          if (rate * 2 > settings.maxRate) break;
          rate *= 2;
        } else {
          failed = rate;
          break;
        }
      }
      for (let halving = 0; held === undefined && halving < 3 && rate > 10; halving += 1) {
        rate = roundRate(rate / 2);
        if ((await test(rate, settings.stepSeconds)).held) held = rate;
        else failed = rate;
      }
      for (let bisection = 0; bisection < settings.bisections && held !== undefined && failed !== undefined; bisection += 1) {
        const middle = roundRate((held + failed) / 2);
        if (middle <= held || middle >= failed) break;
        if ((await test(middle, settings.stepSeconds)).held) held = middle;
        else failed = middle;
      }
    }
    if (held === undefined) return { steps, hold: undefined };
    if (settings.holdSeconds <= settings.stepSeconds) return { steps, hold: steps.filter((step) => step.held && step.rate === held).at(-1) };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const hold = await test(held, settings.holdSeconds, true);
      if (hold.held) return { steps, hold };
      held = roundRate(held * 0.85);
    }
    return { steps, hold: undefined };
  } catch (error) {
    if (!(error instanceof SearchAborted)) throw error;
    const hold = steps.filter((step) => step.held && step.seconds >= settings.holdSeconds).at(-1);
    return { steps, hold, aborted: error.message };
  }
}

class SearchAborted extends Error {}

/** Drives `rate` for `seconds`, then counts what is open and drains it. */
export async function loadStep(
  system: SustainedSystem,
  sampler: RssSampler,
  rate: number,
  seconds: number,
  { drainTimeoutMs, p99LimitMs }: Pick<SearchSettings, 'drainTimeoutMs' | 'p99LimitMs'>,
): Promise<Step> {
  const loadAverage = os.loadavg()[0] ?? Number.NaN;
  const before = await system.counts();
  const started = performance.now();
  const run = await runAtRate(system.target, rate, seconds);
  const loadEnded = performance.now();
  const end = await system.counts();
  const drain = await drainBacklog(system, end, drainTimeoutMs);
  const after = await system.counts();
  const finishedDuringLoad = finished(end) - finished(before);
  // Each lane loads for `seconds`; run.seconds adds the lanes' stagger (under 1 s).
  const acceptedPerSecond = run.expected / seconds;
  const p99 = percentile(run.latenciesMs, 0.99);
  const worstWindowP99 = run.windowP99Ms.length > 0 ? Math.max(...run.windowP99Ms) : p99;
  const why: string[] = [];
  const answeredOtherwise = Object.values(run.unexpected).reduce((sum, count) => sum + count, 0) + run.errors + run.timeouts;
  if (answeredOtherwise > 0) why.push(`${answeredOtherwise} answers not ${system.target.expectedStatus}`);
  if (run.expected < ANSWERED_SHARE * rate * seconds) why.push(`answered ${acceptedPerSecond.toFixed(0)}/s`);
  if (end.open > BACKLOG_LIMIT_SECONDS * rate) why.push(`${end.open} open`);
  const keptUp = why.length === 0;
  if (!(p99 <= p99LimitMs)) why.push(`p99 ${p99.toFixed(1)} ms`);
  return {
    rate,
    seconds,
    run,
    acceptedPerSecond,
    p50: percentile(run.latenciesMs, 0.5),
    p99,
    worstWindowP99,
    openAtEnd: end.open,
    finishedPerSecond: finishedDuringLoad / run.seconds,
    drain,
    notSucceeded: after.other - before.other,
    peakRss: sampler.peaks(started),
    cpuSeconds: sampler.cpuBetween(started, loadEnded),
    held: why.length === 0,
    keptUp,
    why,
    loadAverage,
  };
}

async function drainBacklog(system: SustainedSystem, end: WorkCounts, timeoutMs: number): Promise<Drain> {
  const started = performance.now();
  let counts = end;
  while (counts.open > 0 && performance.now() - started < timeoutMs) {
    await sleep(DRAIN_POLL_MS);
    counts = await system.counts();
  }
  return { done: counts.open === 0, seconds: (performance.now() - started) / 1000, executed: finished(counts) - finished(end) };
}

function finished(counts: WorkCounts): number {
  return counts.succeeded + counts.other;
}

/** Whole tens above 100, so bisection does not chase noise. */
export function roundRate(rate: number): number {
  return rate >= 100 ? Math.round(rate / 10) * 10 : Math.max(1, Math.round(rate));
}

/** Per second while draining; undefined when the backlog was under a second's polling to measure. */
export function drainRate(step: Step): number | undefined {
  return step.drain.executed > 0 && step.drain.seconds >= 1 ? step.drain.executed / step.drain.seconds : undefined;
}

export function describeStep(step: Step): string {
  const drainPerSecond = drainRate(step);
  return (
    `${String(step.rate).padStart(5)}/s x ${step.seconds} s: accepted ${step.acceptedPerSecond.toFixed(0)}/s, ` +
    `p50 ${step.p50.toFixed(2)} ms, p99 ${step.p99.toFixed(2)} ms (worst 10 s: ${step.worstWindowP99.toFixed(2)}); ` +
    `finished ${step.finishedPerSecond.toFixed(0)}/s during the load, ${step.openAtEnd} open at its end; ` +
    (step.drain.done ? `drained in ${step.drain.seconds.toFixed(1)} s` : `NOT drained in ${step.drain.seconds.toFixed(0)} s`) +
    (drainPerSecond === undefined ? '' : ` (${drainPerSecond.toFixed(0)}/s)`) +
    ` -> ${step.held ? 'HELD' : `not held (${step.why.join('; ')})`} [load average ${step.loadAverage.toFixed(1)}]`
  );
}
