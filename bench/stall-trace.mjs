// A diagnostic preload for benchmark children: where did a late run's milliseconds go?
//   BENCH_CHILD_FLAGS="--import ./bench/stall-trace.mjs" npm run bench:scheduling
// Each child appends to <STALL_TRACE_DIR, default $TMPDIR/runline-stalls>/<pid>.log, one line
// per event, starting with the epoch time in ms (to line up with startedAt and scheduledFor):
//   <time> <ms> gc-<kind> <script>               a GC pause of 2 ms or more
//   <time> <ms> stall <script> oncpu=… runq=…    the event loop did not run for more than 12 ms:
//     oncpu is the main thread's CPU time in that gap (JS or GC work), runq its time waiting for a
//     core (Linux /proc/self/task/<pid>/schedstat); the rest was spent blocked.
// The 5 ms probe timer costs a little CPU itself: use it to explain a tail, not to measure one.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const PROBE_MS = 5;
const STALL_MS = 12;
const GC_MIN_MS = 2;
const GC_KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };

const dir = process.env.STALL_TRACE_DIR ?? path.join(os.tmpdir(), 'runline-stalls');
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${process.pid}.log`);
const script = path.basename(process.argv[1] ?? 'node');
const epoch = (at) => (performance.timeOrigin + at).toFixed(1);

new PerformanceObserver((list) => {
  const lines = list
    .getEntries()
    .filter((entry) => entry.duration >= GC_MIN_MS)
    .map((entry) => `${epoch(entry.startTime)} ${entry.duration.toFixed(1)} gc-${GC_KINDS[entry.detail?.kind] ?? entry.detail?.kind} ${script}\n`);
  if (lines.length > 0) appendFileSync(file, lines.join(''));
}).observe({ entryTypes: ['gc'] });

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
/** [on-CPU ns, run-queue ns] of the main thread; zeros where Linux's schedstat is missing. */
const threadTimes = existsSync(schedstat) ? () => readFileSync(schedstat, 'utf8').split(' ').map(Number) : () => [0, 0];

let last = performance.now();
let [lastOnCpu, lastRunQueue] = threadTimes();
setInterval(() => {
  const now = performance.now();
  const [onCpu, runQueue] = threadTimes();
  if (now - last > STALL_MS) {
    const ms = (ns) => (ns / 1e6).toFixed(1);
    appendFileSync(file, `${epoch(last)} ${(now - last - PROBE_MS).toFixed(1)} stall ${script} oncpu=${ms(onCpu - lastOnCpu)} runq=${ms(runQueue - lastRunQueue)}\n`);
  }
  last = now;
  lastOnCpu = onCpu;
  lastRunQueue = runQueue;
}, PROBE_MS).unref();
