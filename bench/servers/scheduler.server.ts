// The scheduler service as it is deployed: the build's own entry point,
// `<RUNLINE_DIST>/services/scheduler/main.js`, which reads its environment (DATABASE_URL,
// NATS_URL, BUS_PREFIX, PORT, HOST, RUN_MIGRATIONS, SCHEDULER_*) and serves until SIGTERM.
// The only addition: when the benchmark goes away (the IPC channel closes, even after a
// SIGKILL) the process sends itself SIGTERM, so its own shutdown runs and nothing outlives the
// benchmark.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.RUNLINE_DIST;
if (!dist) throw new Error('RUNLINE_DIST must be set');

process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
await import(pathToFileURL(path.join(dist, 'services', 'scheduler', 'main.js')).href);
