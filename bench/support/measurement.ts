import type { ChildServer } from './child-server.js';
import type { LoadRun, LoadSummary, LoadTarget } from './load.js';
import type { CpuMeter } from './postgres-cpu.js';

/** A window of the monotonic clock that V8's CPU profiles use too, in microseconds. */
export interface ClockWindow {
  startUs: number;
  endUs: number;
}

/** One load run of a target, with the CPU its server used meanwhile. */
export interface Measurement {
  run: LoadRun;
  summary: LoadSummary;
  /** Undefined where there is no /proc. */
  cpuSeconds?: number;
  /** The database's CPU meanwhile, when the target has a database meter. */
  dbCpuSeconds?: number;
  /**
   * CPU the rest of the machine used meanwhile: everything but this process, the server and
   * its database backends (so other work on the machine, NATS, PostgreSQL's own background
   * processes). Undefined without /proc.
   */
  elsewhereCpuSeconds?: number;
  window: ClockWindow;
}

/** A target, the child serving it, and what its measured rounds gave. */
export interface Measured {
  target: LoadTarget;
  server: ChildServer;
  results: LoadRun[];
  /** CPU seconds the server used during the measured rounds (NaN without /proc). */
  cpuSeconds: number;
  /** Measures the CPU of the database the server uses, if it uses one. */
  database?: CpuMeter;
  /** CPU seconds the database used during the measured rounds (NaN when unknown). */
  dbCpuSeconds: number;
  /** When the measured rounds ran (for cutting a CPU profile to them). */
  windows: ClockWindow[];
  /**
   * Runs after each load run of this target, warm-up included, before anything else is
   * measured: for work the load left behind (queued runs). Returns a line to print, if any.
   */
  afterLoad?: (measurement: Measurement, phase: 'warm-up' | 'round') => Promise<string | undefined>;
}
