/** The clock and the one-shot timer `FireTimer` runs on; tests pass a fake. */
export interface TimerPort {
  /** Milliseconds since the epoch: the clock the claim query compares due times with. */
  now(): number;
  /** Calls `callback` after `delayMs` (0: as soon as possible); returns a cancel function. */
  schedule(callback: () => void, delayMs: number): () => void;
}

export const systemTimers: TimerPort = {
  now: () => Date.now(),
  schedule(callback, delayMs) {
    // setTimeout(…, 0) waits a full millisecond; a job that is already due should not.
    if (delayMs <= 0) {
      const immediate = setImmediate(callback);
      immediate.unref();
      return () => clearImmediate(immediate);
    }
    const timeout = setTimeout(callback, delayMs);
    timeout.unref();
    return () => clearTimeout(timeout);
  },
};

/** Longer waits are taken in steps (setTimeout's limit is about 24.8 days). */
export const MAX_TIMER_DELAY_MS = 60_000;
/**
 * When a pass left a due job behind, another transaction holds it (another replica firing it,
 * a cancel or reschedule deciding it). It is looked at again after this long instead of at once,
 * so replicas never spin on each other's row locks.
 */
export const CONTENDED_RETRY_MS = 5;

/**
 * One armed timer for the earliest item a service knows to be due (the scheduler's jobs, the
 * polling service's triggers). Below, "job" is whatever is due. Pure: no I/O, the clock and
 * timer are a port.
 *
 * It goes off `leadMs` before that job's due time and calls `onFire`, which runs a firing pass.
 * The pass reports back through `passStarted`/`passEnded` with the earliest due time left in
 * the table, and the timer is armed for it. In between, `offer` arms it sooner for a job this
 * replica just inserted or moved, and `withdraw` says whether a job that just went away may be
 * the one it is armed for (then the caller looks at the table again). Offers that arrive while
 * a pass runs are kept and count when it ends, so a job inserted during the pass's "what comes
 * next" read is never missed.
 *
 * The timer never goes off before `dueAt - leadMs` by the port's clock: an early wake-up
 * (timer granularity, long waits taken in steps) is re-armed for the rest.
 */
export class FireTimer {
  private fireAt: number | null = null;
  private cancel: (() => void) | undefined;
  private inPass = false;
  private offeredInPass = Infinity;
  private stopped = false;

  /**
   * @param minSpacingMs after a pass, the next one waits at least this long (unless an offer or
   *   a contended job asks sooner), so one pass serves every job due in that stretch instead of
   *   one pass per job. 0: every job is fired exactly at its time minus the lead.
   */
  constructor(
    private readonly leadMs: number,
    private readonly onFire: () => void,
    private readonly port: TimerPort = systemTimers,
    private readonly minSpacingMs = 0,
  ) {
    if (!Number.isInteger(leadMs) || leadMs < 0) throw new Error(`FireTimer: leadMs must be a non-negative integer, got ${leadMs}`);
    if (!Number.isInteger(minSpacingMs) || minSpacingMs < 0) throw new Error(`FireTimer: minSpacingMs must be a non-negative integer, got ${minSpacingMs}`);
  }

  /** When the timer goes off (ms since the epoch), or null when it is not armed. */
  get armedAt(): number | null {
    return this.fireAt;
  }

  /** A job due at `dueAt` waits now: arm sooner if it comes before what the timer waits for. */
  offer(dueAt: number): void {
    if (this.stopped) return;
    if (this.inPass) {
      this.offeredInPass = Math.min(this.offeredInPass, dueAt);
      return;
    }
    const at = dueAt - this.leadMs;
    if (this.fireAt === null || at < this.fireAt) this.arm(at);
  }

  /**
   * A job due at `dueAt` no longer waits (cancelled, moved). True when the timer may be armed
   * for it, or a pass is running that may have read it: the caller should run a pass, which
   * looks up what comes next.
   */
  withdraw(dueAt: number): boolean {
    if (this.stopped) return false;
    if (this.inPass) return true;
    return this.fireAt !== null && dueAt - this.leadMs <= this.fireAt;
  }

  /** A firing pass starts: the timer is disarmed until `passEnded`. */
  passStarted(): void {
    this.disarm();
    this.inPass = true;
    this.offeredInPass = Infinity;
  }

  /**
   * The pass ended. `nextDueAt` is the earliest due time still waiting that it read after its
   * last claim (null: none, or the pass failed); `horizon` is the due bound that claim used
   * (its now + lead). A next job at or before the horizon was due but not claimable: another
   * transaction holds it, so look again after CONTENDED_RETRY_MS.
   */
  passEnded(nextDueAt: number | null, horizon: number): void {
    this.inPass = false;
    const offered = this.offeredInPass;
    this.offeredInPass = Infinity;
    if (this.stopped) return;
    let at = offered - this.leadMs;
    if (nextDueAt !== null) {
      const waitFor = Math.max(nextDueAt - this.leadMs, this.port.now() + this.minSpacingMs);
      at = Math.min(at, nextDueAt <= horizon ? this.port.now() + CONTENDED_RETRY_MS : waitFor);
    }
    if (at !== Infinity) this.arm(at);
  }

  /** Disarms for good; offers and passes change nothing after this. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private arm(at: number): void {
    this.disarm();
    this.fireAt = at;
    this.wait();
  }

  private wait(): void {
    const delay = this.fireAt === null ? 0 : Math.min(Math.max(0, this.fireAt - this.port.now()), MAX_TIMER_DELAY_MS);
    this.cancel = this.port.schedule(() => this.wentOff(), delay);
  }

  private wentOff(): void {
    this.cancel = undefined;
    if (this.fireAt === null || this.stopped) return;
    if (this.port.now() < this.fireAt) {
      this.wait();
      return;
    }
    this.fireAt = null;
    this.onFire();
  }

  private disarm(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.fireAt = null;
  }
}
