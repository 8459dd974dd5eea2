// Prefer: wait benchmark (issue 33, DESIGN section 14): async triggers with `Prefer: wait=5`
// arrive at --rate a second for fast runs, and each answer's arrival is timed against the run's
// end (its `completedAt`, the time its final transition was written). Two kinds of fast run, one
// round each: `inline` (a self-contained graph the invocation service executes as the request
// waits, recorded once ended) and `queued` (an http node on a local endpoint that answers at
// once: the run is queued, claimed and executed, and the wait hears its end on the bus).
// Baseline, in the same rounds: the same run read by GET right after its answer (one read through
// the gateway and the invocation service), timed from request to answer.
//
//   npm run build && npm run bench:prefer-wait -- [--rate 100] [--seconds 20]
//
// bench/README.md "Prefer: wait" explains what is measured and the goal.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openBenchDatabase } from './support/bench-database.js';
import { formatUsage, parseArgsOrExplain, positiveInteger, REPO_ROOT } from './support/cli.js';
import { distributionOf } from './support/distribution.js';
import { printFigure, type Figure } from './support/figures.js';
import { printTable } from './support/report.js';
import { hasBuild, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';
import { consoleApi } from './support/console-api.js';

const USAGE = `Usage: npm run bench:prefer-wait -- [options]
   or: node --import ./bench/register.mjs bench/prefer-wait.bench.ts [options]

${formatUsage([
  ['--rate <n>', 'Prefer: wait requests a second (default 100, the goal\'s rate)'],
  ['--seconds <n>', 'seconds each round sends them (default 20)'],
  ['--dist <dir>', 'the build to measure (default dist/ of this repository)'],
])}`;

const WAIT = 'wait=5';

interface Sample {
  /** The answer's arrival after the run's end (ms). */
  afterEndMs: number;
  /** The baseline: a GET of the same run, request to answer (ms). */
  getMs: number;
}

interface RoundResult {
  name: string;
  samples: Sample[];
  /** Answers other than 200 with Preference-Applied, or runs that did not succeed. */
  others: number;
}

async function main(session: BenchSession): Promise<number> {
  const { values } = parseArgsOrExplain({
    options: {
      rate: { type: 'string', default: '100' },
      seconds: { type: 'string', default: '20' },
      dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
    },
  });
  const rate = positiveInteger('--rate', values.rate);
  const seconds = positiveInteger('--seconds', values.seconds);
  if (!hasBuild(values.dist)) throw new Error(`no build in ${values.dist}: run npm run build first`);
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs; logs in ${session.workDir}`);

  // The queued runs' http node: answered at once.
  const endpoint = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  session.onCleanup('stop the endpoint', async () => {
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });
  const endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  process.env.OUTBOUND_ALLOWED_CIDRS = '127.0.0.0/8';
  const system = await startSystem(session, { bus: 'nats', profile: false, dist: values.dist, databaseUrl: database.url });
  const gateway = system.server.url;
  const targets = await setUp(gateway, system.consoleJwtSecret, endpointUrl);
  console.log(`gateway + invocation (pid ${system.server.pid}) at ${gateway}; ${rate} requests/s for ${seconds} s per round`);

  // A short warm-up of both kinds (JIT, connection pools), not counted.
  for (const target of Object.values(targets)) await round('warm-up', gateway, target, 20, 2);
  const results: RoundResult[] = [];
  for (const [name, target] of Object.entries(targets)) {
    results.push(await round(name, gateway, target, rate, seconds));
    const last = results.at(-1)!;
    console.log(`  ${name}: ${last.samples.length} answers, ${last.others} others`);
  }

  console.log('');
  const figures: Figure[] = [];
  const rows: string[][] = [['round', 'answer after end p50 (ms)', 'p99 (ms)', 'max (ms)', 'GET p50 (ms)', 'GET p99 (ms)', 'ratio p99 wait/GET', 'goal']];
  for (const result of results) {
    const after = distributionOf(result.samples.map((sample) => sample.afterEndMs));
    const get = distributionOf(result.samples.map((sample) => sample.getMs));
    rows.push([result.name, after.p50.toFixed(2), after.p99.toFixed(2), after.max.toFixed(1), get.p50.toFixed(2), get.p99.toFixed(2), (after.p99 / get.p99).toFixed(2), 'p99 ≤ 5']);
    figures.push({ benchmark: 'prefer-wait', figure: `${result.name}: answer after the run's end p99 (ms)`, value: after.p99, baseline: get.p99, goal: '<= 5', met: after.p99 <= 5 });
  }
  printTable(rows);
  for (const figure of figures) printFigure(figure);
  console.log('\n`completedAt` is taken when the final transition is prepared, before its commit: the delay includes the commit.');
  await session.finish({ clean: true, keepWork: false });
  return results.every((result) => result.others === 0) ? 0 : 1;
}

interface Target {
  orgId: string;
  token: string;
  asyncPath: string;
}

async function setUp(gateway: string, secret: string, endpointUrl: string): Promise<{ inline: Target; queued: Target }> {
  const call = consoleApi(gateway, secret);
  const orgId = String((await call('POST', '/v1/orgs', { name: 'Prefer wait benchmark' })).orgId);
  const project = async (name: string, nodes: object, start: string): Promise<Target> => {
    const projectId = String((await call('POST', `/v1/orgs/${orgId}/projects`, { name, type: 'AUTOMATION' })).projectId);
    const base = `/v1/orgs/${orgId}/projects/${projectId}`;
    await call('PUT', `${base}/definition`, { definition: { schemaVersion: 1, workflow: { trigger: { externalEnabled: true, key: 'external_event' }, start, nodes } } });
    await call('POST', `${base}/publish`);
    await call('PATCH', `${base}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 1_000_000 });
    const token = String((await call('POST', `${base}/api-tokens`, { name: 'prefer wait benchmark', scopes: ['automation:trigger'] })).token);
    return { orgId, token, asyncPath: `/v1/orgs/${orgId}/automations/${projectId}/trigger-async` };
  };
  return {
    inline: await project('Self-contained automation', { done: { type: 'return', value: "{ 'ok': true }" } }, 'done'),
    queued: await project('Quick call automation', {
      call: { type: 'http', method: 'GET', url: `${endpointUrl}/quick`, saveAs: 'reply', next: 'done' },
      done: { type: 'return', value: "{ 'ok': true }" },
    }, 'call'),
  };
}

/** One request with `Prefer: wait`, then the baseline GET of its run. */
async function waitedRun(gateway: string, target: Target): Promise<Sample | null> {
  const response = await fetch(gateway + target.asyncPath, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json', prefer: WAIT },
    body: JSON.stringify({ payload: {} }),
  });
  const body = (await response.json()) as { invocationId?: string; status?: string };
  const answeredAt = Date.now();
  if (response.status !== 200 || response.headers.get('preference-applied') !== WAIT || body.status !== 'SUCCEEDED') return null;
  const getStarted = performance.now();
  const read = await fetch(`${gateway}/v1/orgs/${target.orgId}/external-invocations/${body.invocationId}`, { headers: { authorization: `Bearer ${target.token}` } });
  const run = (await read.json()) as { completedAt: string | null };
  const getMs = performance.now() - getStarted;
  if (read.status !== 200 || !run.completedAt) return null;
  return { afterEndMs: answeredAt - Date.parse(run.completedAt), getMs };
}

async function round(name: string, gateway: string, target: Target, rate: number, seconds: number): Promise<RoundResult> {
  const result: RoundResult = { name, samples: [], others: 0 };
  const pending: Array<Promise<void>> = [];
  const started = Date.now();
  for (let next = started; next < started + seconds * 1000; next += 1000 / rate) {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      waitedRun(gateway, target).then(
        (sample) => (sample ? void result.samples.push(sample) : void (result.others += 1)),
        () => void (result.others += 1),
      ),
    );
  }
  await Promise.all(pending);
  return result;
}

await runBench(USAGE, main);
