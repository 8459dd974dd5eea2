import { CONTENDED_RETRY_MS, FireTimer, MAX_TIMER_DELAY_MS, type TimerPort } from './fire-timer.js';

/** A clock that moves only when told, and the timers scheduled on it. */
class FakeClock implements TimerPort {
  time = 1_000_000;
  private timers: Array<{ at: number; callback: () => void; cancelled: boolean }> = [];

  now(): number {
    return this.time;
  }

  schedule(callback: () => void, delayMs: number): () => void {
    const timer = { at: this.time + delayMs, callback, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Pending timers (not cancelled, not run). */
  get pending(): number[] {
    return this.timers.filter((timer) => !timer.cancelled).map((timer) => timer.at);
  }

  /** Moves to `time`, running every timer due by then in order (timers may schedule more). */
  advanceTo(time: number): void {
    for (;;) {
      const due = this.timers.filter((timer) => !timer.cancelled && timer.at <= time).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.time = Math.max(this.time, due.at);
      due.cancelled = true;
      due.callback();
    }
    this.time = time;
  }

  /** Runs the next timer at a wall time of `time`, which may be before the timer's own time (an early wake-up). */
  fireNextAt(time: number): void {
    const next = this.timers.filter((timer) => !timer.cancelled).sort((a, b) => a.at - b.at)[0];
    if (!next) throw new Error('no timer pending');
    this.time = time;
    next.cancelled = true;
    next.callback();
  }
}

describe('FireTimer', () => {
  let clock: FakeClock;
  let fired: number[];
  const timer = (leadMs: number) => new FireTimer(leadMs, () => fired.push(clock.now()), clock);

  beforeEach(() => {
    clock = new FakeClock();
    fired = [];
  });

  it('goes off lead milliseconds before the due time, once', () => {
    const t = timer(10);
    t.offer(clock.time + 500);
    expect(t.armedAt).toBe(clock.time + 490);
    clock.advanceTo(clock.time + 489);
    expect(fired).toEqual([]);
    clock.advanceTo(clock.time + 1);
    expect(fired).toEqual([1_000_490]);
    expect(t.armedAt).toBeNull();
    clock.advanceTo(clock.time + 10_000);
    expect(fired).toHaveLength(1);
  });

  it('with lead 0 goes off at the due time, not before', () => {
    const t = timer(0);
    t.offer(clock.time + 20);
    clock.advanceTo(clock.time + 19);
    expect(fired).toEqual([]);
    clock.advanceTo(clock.time + 1);
    expect(fired).toEqual([1_000_020]);
  });

  it('fires at once for a job that is already due', () => {
    const t = timer(10);
    t.offer(clock.time - 5000);
    expect(clock.pending).toEqual([clock.time]);
    clock.advanceTo(clock.time);
    expect(fired).toEqual([1_000_000]);
  });

  it('is woken early by a sooner job, and ignores a later one', () => {
    const t = timer(0);
    t.offer(clock.time + 1000);
    t.offer(clock.time + 2000);
    expect(t.armedAt).toBe(1_001_000);
    t.offer(clock.time + 300);
    expect(t.armedAt).toBe(1_000_300);
    expect(clock.pending).toEqual([1_000_300]);
    clock.advanceTo(clock.time + 1000);
    expect(fired).toEqual([1_000_300]);
  });

  it('re-arms for the rest when its timer wakes up early, and never fires before due - lead', () => {
    const t = timer(10);
    t.offer(clock.time + 100);
    clock.fireNextAt(1_000_089);
    expect(fired).toEqual([]);
    expect(clock.pending).toEqual([1_000_090]);
    clock.advanceTo(1_000_090);
    expect(fired).toEqual([1_000_090]);
  });

  it('takes long waits in steps', () => {
    const t = timer(0);
    const due = clock.time + 3 * MAX_TIMER_DELAY_MS + 7;
    t.offer(due);
    expect(clock.pending).toEqual([clock.time + MAX_TIMER_DELAY_MS]);
    clock.advanceTo(due - 1);
    expect(fired).toEqual([]);
    clock.advanceTo(due);
    expect(fired).toEqual([due]);
  });

  describe('around a firing pass', () => {
    it('is disarmed during a pass and armed for the next due time the pass read', () => {
      const t = timer(10);
      t.offer(clock.time + 100);
      t.passStarted();
      expect(t.armedAt).toBeNull();
      expect(clock.pending).toEqual([]);
      t.passEnded(clock.time + 5000, clock.time + 10);
      expect(t.armedAt).toBe(1_004_990);
    });

    it('with a minimum spacing, waits at least that long after a pass for a job due sooner', () => {
      const t = new FireTimer(200, () => fired.push(clock.now()), clock, 100);
      t.passStarted();
      // Due 250 ms from now: without spacing the timer would go off in 50 ms (due - lead).
      t.passEnded(clock.time + 250, clock.time + 200);
      expect(t.armedAt).toBe(clock.time + 100);
      t.passStarted();
      t.passEnded(clock.time + 5000, clock.time + 200);
      expect(t.armedAt).toBe(clock.time + 4800);
      // An offer still arms sooner: a newly registered job is not held back by the spacing.
      t.offer(clock.time + 220);
      expect(t.armedAt).toBe(clock.time + 20);
    });

    it('stays disarmed when nothing waits', () => {
      const t = timer(10);
      t.passStarted();
      t.passEnded(null, clock.time + 10);
      expect(t.armedAt).toBeNull();
      expect(clock.pending).toEqual([]);
    });

    it('keeps a job offered during the pass, even when the pass read a later one', () => {
      const t = timer(10);
      t.passStarted();
      t.offer(clock.time + 200);
      expect(clock.pending).toEqual([]);
      t.passEnded(clock.time + 5000, clock.time + 10);
      expect(t.armedAt).toBe(1_000_190);
    });

    it('looks again shortly, not at once, when a due job was held by another transaction', () => {
      const t = timer(10);
      t.passStarted();
      const horizon = clock.time + 10;
      t.passEnded(clock.time + 3, horizon);
      expect(t.armedAt).toBe(clock.time + CONTENDED_RETRY_MS);
    });

    it('still fires at once for a due job offered after such a pass', () => {
      const t = timer(10);
      t.passStarted();
      t.passEnded(clock.time + 3, clock.time + 10);
      t.offer(clock.time);
      expect(t.armedAt).toBe(clock.time - 10);
      clock.advanceTo(clock.time);
      expect(fired).toEqual([1_000_000]);
    });

    it('asks for a new look when the job it waits for is withdrawn, or any during a pass', () => {
      const t = timer(10);
      t.offer(clock.time + 1000);
      expect(t.withdraw(clock.time + 2000)).toBe(false);
      expect(t.withdraw(clock.time + 1000)).toBe(true);
      t.passStarted();
      expect(t.withdraw(clock.time + 9000)).toBe(true);
      t.passEnded(null, clock.time + 10);
      expect(t.withdraw(clock.time + 1000)).toBe(false);
    });
  });

  it('does nothing once stopped', () => {
    const t = timer(10);
    t.offer(clock.time + 100);
    t.stop();
    expect(clock.pending).toEqual([]);
    t.offer(clock.time + 50);
    t.passStarted();
    t.passEnded(clock.time + 70, clock.time + 10);
    expect(t.withdraw(clock.time + 50)).toBe(false);
    clock.advanceTo(clock.time + 10_000);
    expect(fired).toEqual([]);
  });

  it('refuses a negative or fractional lead, and a negative spacing', () => {
    expect(() => timer(-1)).toThrow(/leadMs/);
    expect(() => timer(1.5)).toThrow(/leadMs/);
    expect(() => new FireTimer(10, () => undefined, clock, -1)).toThrow(/minSpacingMs/);
  });
});
