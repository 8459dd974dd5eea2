// The callback service as it is deployed: the build's own entry point,
// `<RUNLINE_DIST>/services/callback/main.js` (DATABASE_URL, NATS_URL, BUS_PREFIX, PORT, HOST,
// SECRETS_KEY, OUTBOUND_ALLOWED_CIDRS, RUN_MIGRATIONS; the benchmark's certificate authority
// through NODE_EXTRA_CA_CERTS). Sends itself SIGTERM when the benchmark goes away.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.RUNLINE_DIST;
if (!dist) throw new Error('RUNLINE_DIST must be set');

process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
await import(pathToFileURL(path.join(dist, 'services', 'callback', 'main.js')).href);
