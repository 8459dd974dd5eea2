// @ts-check
// The sustained benchmark's peer: an HTTP server on the same Fastify that enqueues each request
// durably with pg-boss (`send`, answered 202 once the job is in PostgreSQL) and runs the jobs
// with a worker in the same process. Each job does the work of Runline's demo flow: render the
// template `Order {{ payload.orderId }}` with the engine's own renderer (the build's
// `@runline/engine`, JSONata underneath) and write the result to a table; the worker writes a
// fetched batch's results in one statement and pg-boss completes the batch in one.
//
// Plain JavaScript, started without the TypeScript hooks, so its RSS is comparable with the
// compiled services'. Environment: DATABASE_URL (a database of its own), PORT, RUNLINE_DIST,
// PEER_WORKERS, PEER_BATCH_SIZE, PEER_POLL_SECONDS, PEER_POOL_SIZE. Stops on SIGTERM.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { PgBoss } from 'pg-boss';
import pg from 'pg';

const QUEUE = 'flow-run';
const TEMPLATE = 'Order {{ payload.orderId }}';

const databaseUrl = requireEnv('DATABASE_URL');
const port = Number(requireEnv('PORT'));
const dist = requireEnv('RUNLINE_DIST');
const workers = Number(process.env.PEER_WORKERS ?? '2');
const batchSize = Number(process.env.PEER_BATCH_SIZE ?? '100');
const pollingIntervalSeconds = Number(process.env.PEER_POLL_SECONDS ?? '0.5');
const poolSize = Number(process.env.PEER_POOL_SIZE ?? '10');

/** @type {{ compileTemplate(source: string): unknown; renderTemplate(template: unknown, scope: object): Promise<string> }} */
const engine = await import(pathToFileURL(path.join(dist, 'node_modules', '@runline', 'engine', 'index.js')).href);
const template = engine.compileTemplate(TEMPLATE);

const boss = new PgBoss({ connectionString: databaseUrl, schema: 'pgboss', max: poolSize });
boss.on('error', (error) => console.error('pg-boss error:', error));
await boss.start();
await boss.createQueue(QUEUE);

const results = new pg.Pool({ connectionString: databaseUrl, max: workers });
await results.query(`CREATE TABLE IF NOT EXISTS peer_results (job_id uuid PRIMARY KEY, output jsonb NOT NULL, finished_at timestamptz NOT NULL DEFAULT now())`);

for (let worker = 0; worker < workers; worker += 1) {
  await boss.work(QUEUE, { batchSize, pollingIntervalSeconds }, async (jobs) => {
    const ids = [];
    const outputs = [];
    for (const job of jobs) {
      const text = await engine.renderTemplate(template, { payload: job.data });
      ids.push(job.id);
      outputs.push(JSON.stringify({ messages: [{ text }] }));
    }
    await results.query('INSERT INTO peer_results (job_id, output) SELECT * FROM unnest($1::uuid[], $2::jsonb[])', [ids, outputs]);
  });
}

const app = Fastify({ logger: false });
app.post('/trigger-async', async (request, reply) => {
  const jobId = await boss.send(QUEUE, /** @type {object} */ (request.body));
  return reply.code(202).send({ jobId, status: 'QUEUED' });
});
app.get('/health/ready', async () => ({ status: 'ok' }));
await app.listen({ port, host: '127.0.0.1' });
console.log(`pg-boss peer on 127.0.0.1:${port}: ${workers} workers, batches of ${batchSize}, polling every ${pollingIntervalSeconds} s, pool ${poolSize}`);

let stopping = false;
process.once('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await app.close();
    await boss.stop({ graceful: false, wait: true, timeout: 5000 });
    await results.end();
    process.exit(0);
  })();
});

/** @param {string} name */
function requireEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}
