// The polling service as it is deployed: the build's own entry point,
// `<RUNLINE_DIST>/services/polling/main.js` (DATABASE_URL, NATS_URL, BUS_PREFIX, PORT, HOST,
// RUN_MIGRATIONS, POLLING_*). It stops itself when the benchmark goes away.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.RUNLINE_DIST;
if (!dist) throw new Error('RUNLINE_DIST must be set');

process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
await import(pathToFileURL(path.join(dist, 'services', 'polling', 'main.js')).href);
