// Run streams benchmark (issue 33, DESIGN section 14): runs flow at --rate a second, each held
// --hold seconds in an http node (so about rate × hold runs are in flight), and the runs are
// followed two ways, one after the other, on the same system:
//   streams  one GET …/external-invocations/{id}/events per run, opened at its 202, until `end`
//   polling  the baseline: one GET …/external-invocations/{id} per run every --poll-ms (1 s
//            freshness), until its status is final
// Figures: the delay from a transition's commit (the status event's `at`, the transaction's time)
// to its event at the client, p50/p99; the gateway's CPU per update and requests per update,
// streams against polling, net of the runs' own cost (a round with no client measured first);
// RSS per idle open stream (--idle streams opened on one held run). Smoke size by default.
//
// With --per-run n each run is followed by n clients of each kind (the goal's 5,000 streams are
// spread over the runs in flight: rate × hold × n).
//
//   npm run build && npm run bench:streams -- [--rate 20] [--seconds 20] [--hold 10] [--per-run 1] [--idle 200]
//
// bench/README.md "Run streams" explains what is measured and the goals.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openBenchDatabase } from './support/bench-database.js';
import { formatUsage, parseArgsOrExplain, positiveInteger, REPO_ROOT } from './support/cli.js';
import { distributionOf } from './support/distribution.js';
import { printFigure } from './support/figures.js';
import { printTable } from './support/report.js';
import { residentBytes } from './support/rss-sampler.js';
import { hasBuild, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';
import { consoleApi } from './support/console-api.js';

const USAGE = `Usage: npm run bench:streams -- [options]
   or: node --import ./bench/register.mjs bench/streams.bench.ts [options]

${formatUsage([
  ['--rate <n>', 'runs started a second (default 20; the goal is measured at 200)'],
  ['--seconds <n>', 'seconds each round starts runs (default 20)'],
  ['--hold <n>', 'seconds each run waits in its http node (default 10): rate × hold runs in flight'],
  ['--per-run <n>', 'clients following each run, streams or pollers (default 1): rate × hold × n followers'],
  ['--idle <n>', 'idle streams opened on one held run for the RSS figure (default 200; the goal: 5000)'],
  ['--poll-ms <n>', 'the polling baseline\'s interval (default 1000: 1 s freshness)'],
  ['--dist <dir>', 'the build to measure (default dist/ of this repository)'],
])}`;

interface Options {
  rate: number;
  seconds: number;
  hold: number;
  perRun: number;
  idle: number;
  pollMs: number;
  dist: string;
}

/** What one round measured. */
interface Round {
  name: string;
  runs: number;
  /** Status updates the clients saw. */
  updates: number;
  requests: number;
  cpuSeconds: number;
  delaysMs: number[];
  /** Runs that could not be started or followed (a connection reset): counted, not retried. */
  errors: number;
}

async function main(session: BenchSession): Promise<number> {
  const { values } = parseArgsOrExplain({
    options: {
      rate: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '20' },
      hold: { type: 'string', default: '10' },
      'per-run': { type: 'string', default: '1' },
      idle: { type: 'string', default: '200' },
      'poll-ms': { type: 'string', default: '1000' },
      dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
    },
  });
  const options: Options = {
    rate: positiveInteger('--rate', values.rate),
    seconds: positiveInteger('--seconds', values.seconds),
    hold: positiveInteger('--hold', values.hold),
    perRun: positiveInteger('--per-run', values['per-run']),
    idle: positiveInteger('--idle', values.idle),
    pollMs: positiveInteger('--poll-ms', values['poll-ms']),
    dist: values.dist,
  };
  if (!hasBuild(options.dist)) throw new Error(`no build in ${options.dist}: run npm run build first`);
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs; logs in ${session.workDir}`);

  // The runs' http node waits here --hold seconds (or until released, for the idle streams' run).
  let heldForever: Array<() => void> = [];
  const endpoint = createServer((request, response) => {
    const answer = () => {
      if (!response.headersSent) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    };
    if (request.url === '/forever') heldForever.push(answer);
    else setTimeout(answer, options.hold * 1000);
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  session.onCleanup('stop the held endpoint', async () => {
    heldForever.forEach((answer) => answer());
    endpoint.closeAllConnections();
    await new Promise((resolve) => endpoint.close(resolve));
  });
  const endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  process.env.OUTBOUND_ALLOWED_CIDRS = '127.0.0.0/8';
  // Every run in flight holds a slot (they wait in their http node), up to the service's maximum.
  process.env.RUN_CONCURRENCY ??= String(Math.min(1000, Math.max(200, options.rate * (options.hold + 2) * 2)));
  const system = await startSystem(session, { bus: 'nats', profile: false, dist: options.dist, databaseUrl: database.url });
  const gateway = system.server.url;
  const setup = await setUp(gateway, system.consoleJwtSecret, endpointUrl);
  console.log(
    `gateway + invocation (pid ${system.server.pid}) at ${gateway}; ${options.rate} runs/s for ${options.seconds} s, each held ${options.hold} s and followed by ${options.perRun} client(s)`,
  );

  const rounds: Round[] = [];
  for (const name of ['runs only', 'streams', 'polling'] as const) {
    rounds.push(await round(name, system.server, gateway, setup, options));
    const last = rounds.at(-1)!;
    console.log(`  ${name}: ${last.runs} runs, ${last.updates} updates, ${last.requests} requests, ${last.cpuSeconds.toFixed(2)} CPU s, ${last.errors} errors`);
  }

  // RSS per idle stream: --idle streams on one run held until the end.
  const idleRun = await startRun(gateway, setup, '/forever');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = residentBytes(system.server.pid);
  const idle = await Promise.all(Array.from({ length: options.idle }, () => openStream(gateway, setup, idleRun, () => undefined)));
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const after = residentBytes(system.server.pid);
  idle.forEach((stream) => stream.abort());
  heldForever.forEach((answer) => answer());
  heldForever = [];

  const [alone, streams, polling] = rounds as [Round, Round, Round];
  const net = (r: Round) => Math.max(0, r.cpuSeconds - alone.cpuSeconds);
  const perUpdate = (r: Round) => (r.updates ? (net(r) * 1e6) / r.updates : Number.NaN);
  const delays = distributionOf(streams.delaysMs);
  const pollDelays = distributionOf(polling.delaysMs);
  console.log('');
  printTable([
    ['figure', 'streams', 'polling (baseline)', 'ratio', 'goal'],
    ['delay commit → client, p50 (ms)', delays.p50.toFixed(1), pollDelays.p50.toFixed(1), '', ''],
    ['delay commit → client, p99 (ms)', delays.p99.toFixed(1), pollDelays.p99.toFixed(1), '', '≤ 50 (streams)'],
    ['gateway CPU per update (µs, net of runs)', perUpdate(streams).toFixed(0), perUpdate(polling).toFixed(0), (perUpdate(streams) / perUpdate(polling)).toFixed(3), '≤ 0.1'],
    ['requests per update', (streams.requests / streams.updates).toFixed(3), (polling.requests / polling.updates).toFixed(3), '', ''],
    [`RSS per idle stream (KB, ${options.idle} streams)`, ((after - before) / options.idle / 1024).toFixed(1), '', '', '≤ 20'],
  ]);
  console.log('\nThe system child runs the invocation service too: its CPU is net of a round with no client (runs only).');
  const rss = (after - before) / options.idle / 1024;
  printFigure({ benchmark: 'streams', figure: 'event delay p99 (ms)', value: delays.p99, baseline: pollDelays.p99, goal: '<= 50', met: delays.p99 <= 50 });
  printFigure({ benchmark: 'streams', figure: 'gateway CPU per update (µs)', value: perUpdate(streams), baseline: perUpdate(polling), goal: '<= 0.1 x', met: perUpdate(streams) <= perUpdate(polling) / 10 });
  printFigure({ benchmark: 'streams', figure: 'RSS per idle stream (KB)', value: rss, goal: '<= 20', met: rss <= 20 });
  await session.finish({ clean: true, keepWork: false });
  return 0;
}

interface Setup {
  orgId: string;
  projectId: string;
  token: string;
  asyncPath: string;
}

async function setUp(gateway: string, secret: string, endpointUrl: string): Promise<Setup> {
  const call = consoleApi(gateway, secret);
  const orgId = String((await call('POST', '/v1/orgs', { name: 'Streams benchmark' })).orgId);
  const projectId = String((await call('POST', `/v1/orgs/${orgId}/projects`, { name: 'Held automation', type: 'AUTOMATION' })).projectId);
  const base = `/v1/orgs/${orgId}/projects/${projectId}`;
  const definition = {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'GET', url: `${endpointUrl}{{ payload.path }}`, saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
  await call('PUT', `${base}/definition`, { definition });
  await call('POST', `${base}/publish`);
  await call('PATCH', `${base}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 1_000_000 });
  const token = String((await call('POST', `${base}/api-tokens`, { name: 'streams benchmark', scopes: ['automation:trigger'] })).token);
  return { orgId, projectId, token, asyncPath: `/v1/orgs/${orgId}/automations/${projectId}/trigger-async` };
}

async function startRun(gateway: string, setup: Setup, pathOnEndpoint = '/held'): Promise<string> {
  const response = await fetch(gateway + setup.asyncPath, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ payload: { path: pathOnEndpoint } }),
  });
  const body = (await response.json()) as { invocationId?: string };
  if (response.status !== 202 || !body.invocationId) throw new Error(`trigger: ${response.status} ${JSON.stringify(body)}`);
  return body.invocationId;
}

/** One stream of a run; `onStatus` gets each status event's commit time and arrival time. */
async function openStream(gateway: string, setup: Setup, id: string, onStatus: (at: number, receivedAt: number, status: string) => void) {
  const controller = new AbortController();
  const response = await fetch(`${gateway}/v1/orgs/${setup.orgId}/external-invocations/${id}/events`, {
    headers: { authorization: `Bearer ${setup.token}` },
    signal: controller.signal,
  });
  const done = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!block.includes('event: status')) continue;
          const data = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { status: string; at: string };
          onStatus(Date.parse(data.at), Date.now(), data.status);
        }
      }
    } catch {
      // Aborted.
    }
  })();
  return { done, abort: () => controller.abort() };
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

async function round(name: 'runs only' | 'streams' | 'polling', server: { cpuSeconds(): number | undefined }, gateway: string, setup: Setup, options: Options): Promise<Round> {
  const result: Round = { name, runs: 0, updates: 0, requests: 0, cpuSeconds: 0, delaysMs: [], errors: 0 };
  const following: Array<Promise<unknown>> = [];
  const cpuBefore = server.cpuSeconds() ?? 0;
  const started = Date.now();
  const interval = 1000 / options.rate;
  for (let next = started; next < started + options.seconds * 1000; next += interval) {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    following.push(
      startRun(gateway, setup).then(async (id) => {
        result.runs += 1;
        if (name === 'streams') {
          await Promise.all(
            Array.from({ length: options.perRun }, async () => {
              result.requests += 1;
              // Only live transitions count for the delay: the replay at the start is history.
              const openedAt = Date.now();
              const stream = await openStream(gateway, setup, id, (at, receivedAt) => {
                result.updates += 1;
                if (at >= openedAt) result.delaysMs.push(receivedAt - at);
              });
              await stream.done;
            }),
          );
        } else if (name === 'polling') {
          await Promise.all(Array.from({ length: options.perRun }, () => poll(id)));
        } else {
          await new Promise((resolve) => setTimeout(resolve, (options.hold + 1) * 1000));
        }
      }).catch(() => void (result.errors += 1)),
    );
  }
  await Promise.all(following);
  result.cpuSeconds = (server.cpuSeconds() ?? 0) - cpuBefore;
  return result;

  async function poll(id: string): Promise<void> {
    let last = '';
    for (;;) {
      result.requests += 1;
      const response = await fetch(`${gateway}/v1/orgs/${setup.orgId}/external-invocations/${id}`, { headers: { authorization: `Bearer ${setup.token}` } });
      const run = (await response.json()) as { status: string; updatedAt: string };
      if (run.status !== last) {
        result.updates += 1;
        if (last) result.delaysMs.push(Date.now() - Date.parse(run.updatedAt));
        last = run.status;
      }
      if (FINAL.has(run.status)) break;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    }
  }
}

await runBench(USAGE, main);
