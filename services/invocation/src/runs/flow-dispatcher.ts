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
 * back by as much), and at once when a gated run it ran stopped; each is started through RunStarter, whose gate decides again under the slots'
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
  private readonly onReleased = () => this.wake();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starter: RunStarter,
    private readonly flow: FlowControl,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.flow.events.on('released', this.onReleased);
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.flow.events.off('released', this.onReleased);
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
    try {
      waiting = await nextWaitingStarts(this.transactions.dataSource.manager, BATCH, PER_SLOT);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not read the runs waiting for flow control; trying again shortly');
      return null;
    }
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
