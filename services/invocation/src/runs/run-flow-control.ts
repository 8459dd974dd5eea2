import { EventEmitter } from 'node:events';
import { Inject, Injectable } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import { GroupCommit, TransactionRunner } from '@runline/db';
import { METRICS_REGISTRY } from '@runline/runtime';
import { evaluateFlowControl, type CompiledFlowControl } from '@runline/engine';
import { InvocationConfig } from '../config.js';
import { flowRulesOf, WAIT_REASONS, type FlowRules } from '../lifecycle/flow-decision.js';
import { historyAppend } from '../lifecycle/run-history.js';
import type { Transition } from '../lifecycle/run-lifecycle.js';
import type { RunPlan } from '../lifecycle/run-plan.js';
import { DefinitionCatalog } from './definition-catalog.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import { forgetWait, gateStart, gateStarts, waitingByReason, type GateEntry, type GateResult } from './flow-gate.repository.js';
import type { InvocationRow } from './run-reads.repository.js';
import { transition } from './run-transitions.repository.js';

/**
 * Flow control of runs in this process (DESIGN section 13): which runs it applies to, and their
 * gated start. A run whose target's trigger has no flowControl is not touched: its start is
 * what it was, without one more statement (the published definition is compiled and held in
 * memory already). The settings are those of the definition published NOW, not the run's
 * version: a publish that changes them is in force for the next start, waiting runs included.
 */
/** A target without flowControl in a project with maxConcurrentRuns: only the project's slot. */
const NO_FLOW_CONTROL: CompiledFlowControl = { concurrency: [], priority: 0 };
/**
 * Gated starts decided in one transaction at most: the locks of their slots are held until it
 * commits, so a longer one holds up the other replicas' starts of those slots longer. Never
 * more than RUN_CONCURRENCY: each start of a batch holds a run slot while it is decided.
 */
const GATE_BATCH = 64;

@Injectable()
export class FlowControl {
  /**
   * Emits 'released' when a gated run this process ran has stopped (ended or paused): a slot may
   * be free; `stopped:<id>` for that run; and 'held' when this process held a run back.
   */
  readonly events = new EventEmitter();

  /**
   * Starts without debounce that arrive while others are being decided share the next
   * transaction (gateStarts): the runs of a project under its maxConcurrentRuns, or of one key,
   * all take the same slot's lock, so one transaction each started them one at a time (about
   * 115 a second on the two-core machine, bench:sustained --system flow-control). One batch at a
   * time: a second one in flight here would only wait for the first one's locks (34 ms a batch
   * on average, measured), while the starts it holds could have joined the next batch.
   */
  private readonly gates: GroupCommit<QueuedGateEntry, GateResult>;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    // A batch waits until each of its starts has its run slot back: more starts than slots would wait for each other.
    this.gates = new GroupCommit(
      async (queued) => {
        await Promise.all(queued.map((one) => one.ready()));
        return transactions.run((tx) => gateStarts(tx, queued.map((one) => one.entry)));
      },
      1,
      Math.min(GATE_BATCH, config.RUN_CONCURRENCY),
    );
    const manager = transactions.dataSource.manager;
    new Gauge({
      name: 'runline_runs_waiting',
      help: 'Runs flow control holds back now, by what they wait for (concurrency, throttle, debounce), every project together.',
      labelNames: ['reason'],
      registers: [registry],
      async collect() {
        const counts = await waitingByReason(manager);
        this.reset();
        for (const reason of WAIT_REASONS) this.set({ reason }, counts.get(reason) ?? 0);
      },
    });
  }

  /**
   * What the run's start must respect: its trigger's flowControl and its project's
   * maxConcurrentRuns (as the copies hold them now); null when neither applies. Bot messages are
   * not gated: a session runs one message at a time anyway (bot-sessions.ts).
   */
  async rulesOf(row: InvocationRow, plan: RunPlan): Promise<FlowRules | null> {
    if (plan.target === 'BOT') return null;
    const project = await this.catalog.project(row.projectId);
    if (!project || project.deleted) return null;
    const settings = plan.definitionVersion === 0 || project.publishedVersion === 0 ? undefined : (await this.catalog.published(project)).graphs[plan.graph]?.trigger?.flowControl;
    if (settings === undefined && project.maxConcurrentRuns === null) return null;
    const flowControl = settings ?? NO_FLOW_CONTROL;
    const values = await evaluateFlowControl(flowControl, { payload: plan.payload, input: plan.input });
    const createdAt = row.known?.document.createdAt;
    // Debounce is for async runs only: a sync caller waits for its own run's answer.
    return flowRulesOf(row.projectId, plan.target, flowControl, values, createdAt ? Date.parse(createdAt) : Date.now(), plan.mode === 'ASYNC', project.maxConcurrentRuns);
  }

  /**
   * Starts the run (`claim`) if its slots allow it now, else records it waiting (and emits
   * 'held'); one transaction, begun once `ready` resolved (the caller's run slot taken back).
   */
  async gate(row: InvocationRow, rules: FlowRules, claim: Transition, ready: () => Promise<void>): Promise<GateResult> {
    if (rules.slots.length === 0 && !rules.debounce) throw new Error('gate needs a slot or a debounce');
    const gated = { invocationId: row.id, projectId: row.projectId, expected: claim.expected, change: claim.change, history: (at: Date) => historyAppend(claim, at) };
    const result = rules.debounce
      ? await ready().then(() => this.transactions.run((tx) => gateStart(tx, gated, rules)))
      : await this.gates.submit({ entry: { claim: gated, rules }, ready });
    if (result.outcome === 'waiting') this.events.emit('held');
    return result;
  }

  /** Ends a run still waiting for its gate as `ending` says (a sync run past its deadline); null when it had moved on. */
  async endWaiting(invocationId: string, ending: Transition): Promise<InvocationDocument | null> {
    return this.transactions.run(async (tx) => {
      const document = await transition(tx, invocationId, ending.expected, ending.change, historyAppend(ending));
      if (document) await forgetWait(tx, invocationId);
      return document;
    });
  }

  /** A gated run this process ran (`invocationId`) has stopped: its slots may be free, and a request holding it may answer. */
  released(invocationId: string): void {
    this.events.emit('released');
    this.events.emit(stoppedEvent(invocationId));
  }

  /**
   * Resolves when this process's execution of `invocationId` stops, or after `ms` at the latest
   * (the run may start and end on another replica, which says nothing here).
   */
  stoppedOrAfter(invocationId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const event = stoppedEvent(invocationId);
      const done = () => {
        clearTimeout(timer);
        this.events.off(event, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.events.once(event, done);
    });
  }
}

/** A start waiting for the gate's next batch: decided once `ready` resolved. */
interface QueuedGateEntry {
  entry: GateEntry;
  ready: () => Promise<void>;
}

function stoppedEvent(invocationId: string): string {
  return `stopped:${invocationId}`;
}
