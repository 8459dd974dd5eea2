import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import type { Expectation } from '../lifecycle/run-lifecycle.js';
import { FlowControl } from './run-flow-control.js';
import { earliestRetryInMs, forgetIfGone, nextWaitingStarts, type WaitingStarts } from './flow-gate.repository.js';
import { RunStarter } from './run-starter.js';

/** How often every replica looks for waiting runs that may start (a slot freed elsewhere); sooner when a throttle's time comes. */
const POLL_MS = 100;
/** Waiting runs tried per look. */
const BATCH = 64;
/** Of them, from one slot at most: the slot's first-ranked run and the next ones behind it. */
const PER_SLOT = 16;

/**
 * Starts runs held back by flow control once they may (DESIGN section 13). Every replica looks
 * at the first-ranked waiting runs of each slot every POLL_MS, when the earliest throttle's
 * time comes if that is sooner (with burst 0 a run tried a look late moves every later start
 * back by as much), and at once when a gated run it ran stopped while runs may be waiting; each is started through RunStarter, whose gate decides again under the slots'
 * locks, so two replicas trying one run start it once and never beyond a limit. Nothing is held
 * in memory: a replica killed with waiting runs loses nothing, and the slots of its RUNNING
 * runs come back when the sweeper ends them after their lease.
 */
@Injectable()
export class FlowDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /**
   * Whether runs may be waiting: the last look found some (or a throttle's time to come), or
   * this process held one back since. A run that stops wakes a look only then: with limits
   * that do not bind, nothing waits, and a look per run that stops would be a query per run.
   * Runs held back by another replica are seen at the next look, at most POLL_MS later.
   */
  private mayBeWaiting = true;
  private readonly onReleased = () => {
    if (this.mayBeWaiting) this.wake();
  };
  private readonly onHeld = () => {
    this.mayBeWaiting = true;
  };

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starter: RunStarter,
    private readonly flow: FlowControl,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.flow.events.on('released', this.onReleased);
    this.flow.events.on('held', this.onHeld);
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.flow.events.off('released', this.onReleased);
    this.flow.events.off('held', this.onHeld);
    await this.looking;
  }

  /** Looks now (or right after the look under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.looking = this.look()
      .catch(() => null)
      .then((nextInMs) => {
        this.looking = null;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedule(nextInMs ?? POLL_MS);
      });
  }

  private schedule(inMs = POLL_MS): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), Math.max(1, Math.min(inMs, POLL_MS)));
    this.timer.unref();
  }

  /** Tries the runs worth trying now; resolves with when to look next for a throttle's time (ms), if one waits. */
  private async look(): Promise<number | null> {
    let waiting: WaitingStarts;
    // Cleared before the read: a run held back while it reads sets it again.
    this.mayBeWaiting = false;
    try {
      waiting = await nextWaitingStarts(this.transactions.dataSource.manager, BATCH, PER_SLOT);
    } catch (error) {
      this.mayBeWaiting = true;
      this.logger.warn({ err: error }, 'could not read the runs waiting for flow control; trying again shortly');
      return null;
    }
    if (waiting.runs.length > 0 || waiting.nextInMs !== null) this.mayBeWaiting = true;
    await Promise.all(
      waiting.runs.map((run) =>
        this.starter.start(run.invocationId, expectationOf(run), () => Promise.resolve())
          .then((attempt) => (attempt === 'not-claimed' ? forgetIfGone(this.transactions.dataSource.manager, run.invocationId) : undefined))
          .catch((error: unknown) => {
          this.logger.warn({ err: error, invocationId: run.invocationId }, 'a waiting run could not be started; it is tried again');
        }),
      ),
    );
    if (waiting.runs.length === 0) return waiting.nextInMs;
    // The runs just tried that a throttle held back have a new time: when the next one comes.
    return earliestRetryInMs(this.transactions.dataSource.manager).catch(() => null);
  }
}

function expectationOf(run: WaitingStarts['runs'][number]): Expectation {
  if (run.waitingJob !== null) return { status: run.fromStatus as Expectation['status'], waitingJob: run.waitingJob };
  return { status: run.fromStatus as Expectation['status'], dispatched: true };
}
