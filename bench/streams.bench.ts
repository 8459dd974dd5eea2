// Run streams benchmark (issue 33, DESIGN section 14): runs flow at --rate a second, each held
// --hold seconds (so about rate × hold runs are in flight), and the runs are followed two ways,
// one after the other, on the same system:
//   streams  one GET …/external-invocations/{id}/events per run, opened at its 202, until `end`
//   polling  the baseline: one GET …/external-invocations/{id} per run every --poll-ms (1 s
//            freshness), until its status is final
// How a run is held (--hold-in):
//   wait  (default) in a wait node: SUSPENDED for --hold seconds, holding no run slot and no
//         connection; the scheduler service (a process of its own, as deployed) resumes it. This
//         is the issue's shape: 200 runs/s, one stream per run, 25-s runs, 5,000 streams open.
//         A stream sees QUEUED, RUNNING, SUSPENDED, RUNNING (resumed) and SUCCEEDED.
//   http  in an http node calling this benchmark's endpoint, which answers after --hold seconds:
//         each run held is RUNNING in a run slot (RUN_CONCURRENCY, at most 1,000) and on one of
//         the invocation service's connections to that address, of which there are at most 64
//         (OutboundGuard's maxSocketsPerAddress): beyond 64 runs held at once the others wait
//         for a connection and last longer than --hold.
// Figures: the delay from a transition's commit (the status event's `at`, the transaction's time)
// to its event at the client, p50/p99, for every status event that happens while the stream is
// open; the gateway's CPU per update and per followed run, streams against polling, net of the
// runs' own cost (a round with no client measured first); RSS per idle open stream (--idle
// streams opened on one run held in an http node until the end, whatever --hold-in says). Each
// round also prints how the runs ended, how long they lasted and the most files (sockets) this
// process had open. Smoke size by default.
//
// With --per-run n each run is followed by n clients of each kind (rate × hold × n followers).
//
//   npm run build && npm run bench:streams -- [--rate 20] [--seconds 20] [--hold 10] [--hold-in wait] [--per-run 1] [--idle 200]
//   the issue's shape: npm run bench:streams -- --rate 200 --seconds 30 --hold 25 --per-run 1 --idle 5000
//
// bench/README.md "Run streams" explains what is measured and the goals.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openBenchDatabase } from './support/bench-database.js';
import { formatUsage, parseArgsOrExplain, positiveInteger, REPO_ROOT, UsageError } from './support/cli.js';
import { distributionOf } from './support/distribution.js';
import { printFigure } from './support/figures.js';
import { openFileLimit, watchOpenFiles } from './support/open-files.js';
import { printTable } from './support/report.js';
import { residentBytes } from './support/rss-sampler.js';
import { hasBuild, startScheduler, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';
import { consoleApi } from './support/console-api.js';

const USAGE = `Usage: npm run bench:streams -- [options]
   or: node --import ./bench/register.mjs bench/streams.bench.ts [options]

${formatUsage([
  ['--rate <n>', 'runs started a second (default 20; the goal is measured at 200)'],
  ['--seconds <n>', 'seconds each round starts runs (default 20)'],
  ['--hold <n>', 'seconds each run is held (default 10; the issue\'s runs: 25): rate × hold runs in flight'],
  ['--hold-in <kind>', 'wait (default): a wait node, SUSPENDED, no run slot held, resumed by the scheduler\nhttp: an http node on this benchmark\'s endpoint (a run slot each; at most 64 held at once)'],
  ['--per-run <n>', 'clients following each run, streams or pollers (default 1): rate × hold × n followers'],
  ['--idle <n>', 'idle streams opened on one held run for the RSS figure (default 200; the goal: 5000)'],
  ['--poll-ms <n>', 'the polling baseline\'s interval (default 1000: 1 s freshness)'],
  ['--dist <dir>', 'the build to measure (default dist/ of this repository)'],
])}`;

type HoldKind = 'wait' | 'http';

interface Options {
  rate: number;
  seconds: number;
  hold: number;
  holdIn: HoldKind;
  perRun: number;
  idle: number;
  pollMs: number;
  dist: string;
}

/** The invocation service's connections to one address (OutboundGuard's maxSocketsPerAddress default): http-held runs beyond it wait. */
const HTTP_NODE_CONNECTIONS = 64;

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
  /** How the followed runs ended (their final status, as the first follower of each saw it). */
  ended: Map<string, number>;
  /** 202 → the final status's commit, per followed run. */
  durationsMs: number[];
  /** The most files (sockets) this process had open during the round. */
  peakOpenFiles: number | undefined;
}

async function main(session: BenchSession): Promise<number> {
  const { values } = parseArgsOrExplain({
    options: {
      rate: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '20' },
      hold: { type: 'string', default: '10' },
      'hold-in': { type: 'string', default: 'wait' },
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
    holdIn: holdKind(values['hold-in']),
    perRun: positiveInteger('--per-run', values['per-run']),
    idle: positiveInteger('--idle', values.idle),
    pollMs: positiveInteger('--poll-ms', values['poll-ms']),
    dist: values.dist,
  };
  if (!hasBuild(options.dist)) throw new Error(`no build in ${options.dist}: run npm run build first`);
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs; logs in ${session.workDir}`);
  warnAboutLimits(options);
  const openFiles = watchOpenFiles();
  session.onCleanup('stop counting open files', async () => openFiles.stop());

  // http-held runs wait here --hold seconds; the idle streams' run waits on /forever until released.
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
  // An http-held run holds its slot all along, up to the service's maximum; a waiting run only
  // while it runs (before and after its wait), so the same number is plenty there.
  process.env.RUN_CONCURRENCY ??= String(Math.min(1000, Math.max(200, options.rate * (options.hold + 2) * 2)));
  const system = await startSystem(session, { bus: 'nats', profile: false, dist: options.dist, databaseUrl: database.url });
  // Waiting runs are resumed by the scheduler service, in a process of its own as deployed.
  const scheduler = options.holdIn === 'wait' ? await startScheduler(session, system, options.dist) : undefined;
  const gateway = system.server.url;
  const heldInHttp = httpHeldWorkflow(endpointUrl);
  const setup = await setUp(gateway, system.consoleJwtSecret, 'Streams benchmark', options.holdIn === 'wait' ? waitingWorkflow(options.hold) : heldInHttp);
  // The idle streams' run must last until the RSS is read: held in an http node until released.
  const idleSetup = options.holdIn === 'wait' ? await setUp(gateway, system.consoleJwtSecret, 'Streams benchmark, idle run', heldInHttp) : setup;
  console.log(
    `gateway + invocation (pid ${system.server.pid}) at ${gateway}${scheduler ? `, scheduler (pid ${scheduler.pid})` : ''}; ` +
      `${options.rate} runs/s for ${options.seconds} s, each held ${options.hold} s in ${options.holdIn === 'wait' ? 'a wait node' : 'an http node'} and followed by ${options.perRun} client(s)`,
  );

  const rounds: Round[] = [];
  for (const name of ['runs only', 'streams', 'polling'] as const) {
    openFiles.takePeak();
    const last = await round(name, system.server, gateway, setup, options);
    last.peakOpenFiles = openFiles.takePeak();
    rounds.push(last);
    console.log(
      `  ${name}: ${last.runs} runs, ${last.updates} updates, ${last.requests} requests, ${last.cpuSeconds.toFixed(2)} CPU s, ${last.errors} errors; ` +
        `${endedSummary(last)}; at most ${last.peakOpenFiles ?? '?'} files open here`,
    );
  }

  // RSS per idle stream: --idle streams on one run held until the end.
  const idleRun = await startRun(gateway, idleSetup, '/forever');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = residentBytes(system.server.pid);
  const idle = await Promise.all(Array.from({ length: options.idle }, () => openStream(gateway, idleSetup, idleRun, () => undefined)));
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const after = residentBytes(system.server.pid);
  console.log(`  idle: ${options.idle} streams on one held run; at most ${openFiles.takePeak() ?? '?'} files open here (limit ${openFileLimit() ?? '?'})`);
  idle.forEach((stream) => stream.abort());
  heldForever.forEach((answer) => answer());
  heldForever = [];

  const [alone, streams, polling] = rounds as [Round, Round, Round];
  const net = (r: Round) => Math.max(0, r.cpuSeconds - alone.cpuSeconds);
  const perUpdate = (r: Round) => (r.updates ? (net(r) * 1e6) / r.updates : Number.NaN);
  const perFollower = (r: Round) => (r.runs ? (net(r) * 1e6) / (r.runs * options.perRun) : Number.NaN);
  const delays = distributionOf(streams.delaysMs);
  const pollDelays = distributionOf(polling.delaysMs);
  console.log('');
  printTable([
    ['figure', 'streams', 'polling (baseline)', 'ratio', 'goal'],
    ['delay commit → client, p50 (ms)', delays.p50.toFixed(1), pollDelays.p50.toFixed(1), '', ''],
    ['delay commit → client, p99 (ms)', delays.p99.toFixed(1), pollDelays.p99.toFixed(1), '', '≤ 50 (streams)'],
    ['gateway CPU per update (µs, net of runs)', perUpdate(streams).toFixed(0), perUpdate(polling).toFixed(0), (perUpdate(streams) / perUpdate(polling)).toFixed(3), '≤ 0.1'],
    ['gateway CPU per follower (µs, net of runs)', perFollower(streams).toFixed(0), perFollower(polling).toFixed(0), (perFollower(streams) / perFollower(polling)).toFixed(3), ''],
    ['updates per follower', (streams.updates / (streams.runs * options.perRun)).toFixed(2), (polling.updates / (polling.runs * options.perRun)).toFixed(2), '', ''],
    ['requests per update', (streams.requests / streams.updates).toFixed(3), (polling.requests / polling.updates).toFixed(3), '', ''],
    [`RSS per idle stream (KB, ${options.idle} streams)`, ((after - before) / options.idle / 1024).toFixed(1), '', '', '≤ 20'],
  ]);
  console.log('\nThe system child runs the invocation service too: its CPU is net of a round with no client (runs only).');
  console.log(
    'A poller sees only the transitions that last until its next GET (not the milliseconds-long RUNNING of a resumed run): ' +
      'per update, polling\'s CPU is spread over fewer updates than a stream delivers; per follower, both follow the same runs.',
  );
  const rss = (after - before) / options.idle / 1024;
  printFigure({ benchmark: 'streams', figure: 'event delay p99 (ms)', value: delays.p99, baseline: pollDelays.p99, goal: '<= 50', met: delays.p99 <= 50 });
  printFigure({ benchmark: 'streams', figure: 'gateway CPU per update (µs)', value: perUpdate(streams), baseline: perUpdate(polling), goal: '<= 0.1 x', met: perUpdate(streams) <= perUpdate(polling) / 10 });
  printFigure({ benchmark: 'streams', figure: 'RSS per idle stream (KB)', value: rss, goal: '<= 20', met: rss <= 20 });
  await session.finish({ clean: true, keepWork: false });
  return 0;
}

function holdKind(text: string): HoldKind {
  if (text !== 'wait' && text !== 'http') throw new UsageError(`--hold-in must be wait or http, got "${text}"`);
  return text;
}

/**
 * Says beforehand what this size may run into. Every follower holds at most one socket here (a
 * stream while it is open, a poller while its GET is answered; the runs' triggers and the
 * pollers between GETs share the pooled keep-alive connections), so a round's followers can
 * need at most rate × seconds × per-run sockets, should no run end before the round's last start.
 */
function warnAboutLimits(options: Options): void {
  const limit = openFileLimit();
  const worst = Math.max(options.rate * options.seconds * options.perRun, options.idle) + (options.holdIn === 'http' ? HTTP_NODE_CONNECTIONS : 0);
  if (limit !== undefined && worst + 200 > limit) {
    console.log(`warning: if the runs fall behind, up to ${worst} sockets may be open here at once, near or above this process's limit of ${limit} open files (EMFILE)`);
  }
  if (options.holdIn === 'http' && options.rate * options.hold > HTTP_NODE_CONNECTIONS) {
    console.log(
      `warning: ${options.rate * options.hold} runs held in http nodes at once, but the invocation service opens at most ${HTTP_NODE_CONNECTIONS} connections to one address: ` +
        'the others wait for one and last longer than --hold (see each round\'s run durations); --hold-in wait holds no connection',
    );
  }
}

function endedSummary(r: Round): string {
  if (r.ended.size === 0) return 'runs not followed';
  const statuses = [...r.ended].map(([status, count]) => `${count} ${status}`).join(', ');
  const lasted = distributionOf(r.durationsMs);
  return `ended ${statuses}; lasted p50 ${(lasted.p50 / 1000).toFixed(1)} s, max ${(lasted.max / 1000).toFixed(1)} s (202 → final status)`;
}

interface Setup {
  orgId: string;
  projectId: string;
  token: string;
  asyncPath: string;
}

type Workflow = Record<string, unknown>;

/** The run waits in an http node for this benchmark's endpoint, on the path its payload names. */
function httpHeldWorkflow(endpointUrl: string): Workflow {
  return {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'call',
    nodes: {
      call: { type: 'http', method: 'GET', url: `${endpointUrl}{{ payload.path }}`, saveAs: 'reply', next: 'done' },
      done: { type: 'return', value: "{ 'ok': true }" },
    },
  };
}

/** The run waits in a wait node: SUSPENDED for `seconds`, then resumed by the scheduler. */
function waitingWorkflow(seconds: number): Workflow {
  return {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'pause',
    nodes: {
      pause: { type: 'wait', seconds, next: 'done' },
      done: { type: 'return', value: "{ 'ok': true }" },
    },
  };
}

async function setUp(gateway: string, secret: string, name: string, workflow: Workflow): Promise<Setup> {
  const call = consoleApi(gateway, secret);
  const orgId = String((await call('POST', '/v1/orgs', { name })).orgId);
  const projectId = String((await call('POST', `/v1/orgs/${orgId}/projects`, { name: 'Held automation', type: 'AUTOMATION' })).projectId);
  const base = `/v1/orgs/${orgId}/projects/${projectId}`;
  await call('PUT', `${base}/definition`, { definition: { schemaVersion: 1, workflow } });
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
  const result: Round = { name, runs: 0, updates: 0, requests: 0, cpuSeconds: 0, delaysMs: [], errors: 0, ended: new Map(), durationsMs: [], peakOpenFiles: undefined };
  const following: Array<Promise<unknown>> = [];
  const cpuBefore = server.cpuSeconds() ?? 0;
  const started = Date.now();
  const interval = 1000 / options.rate;
  for (let next = started; next < started + options.seconds * 1000; next += interval) {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    following.push(
      startRun(gateway, setup).then(async (id) => {
        const acceptedAt = Date.now();
        result.runs += 1;
        // One follower of each run says how it ended and when (its final status's commit).
        const ended = (status: string, at: number) => {
          result.ended.set(status, (result.ended.get(status) ?? 0) + 1);
          result.durationsMs.push(at - acceptedAt);
        };
        if (name === 'streams') {
          await Promise.all(
            Array.from({ length: options.perRun }, async (_, follower) => {
              result.requests += 1;
              // Only live transitions count for the delay: the replay at the start is history.
              // Every one counts, SUSPENDED and the resumed RUNNING of a waiting run too.
              const openedAt = Date.now();
              const stream = await openStream(gateway, setup, id, (at, receivedAt, status) => {
                result.updates += 1;
                if (at >= openedAt) result.delaysMs.push(receivedAt - at);
                if (follower === 0 && FINAL.has(status)) ended(status, at);
              });
              await stream.done;
            }),
          );
        } else if (name === 'polling') {
          await Promise.all(Array.from({ length: options.perRun }, (_, follower) => poll(id, follower === 0 ? ended : undefined)));
        } else {
          await new Promise((resolve) => setTimeout(resolve, (options.hold + 1) * 1000));
        }
      }).catch(countError),
    );
  }
  await Promise.all(following);
  result.cpuSeconds = (server.cpuSeconds() ?? 0) - cpuBefore;
  return result;

  /** Counts a run whose trigger or stream failed; the first few say why. */
  function countError(error: unknown): void {
    result.errors += 1;
    if (result.errors <= 5) console.error(`  ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }

  async function poll(id: string, ended?: (status: string, at: number) => void): Promise<void> {
    let last = '';
    for (;;) {
      result.requests += 1;
      const response = await fetch(`${gateway}/v1/orgs/${setup.orgId}/external-invocations/${id}`, { headers: { authorization: `Bearer ${setup.token}` } });
      const run = (await response.json()) as { status: string; updatedAt: string };
      // A poller sees the status of the moment: a transition shorter than its interval (the
      // resumed RUNNING of a waiting run) is no update to it.
      if (run.status !== last) {
        result.updates += 1;
        if (last) result.delaysMs.push(Date.now() - Date.parse(run.updatedAt));
        last = run.status;
      }
      if (FINAL.has(run.status)) {
        ended?.(run.status, Date.parse(run.updatedAt));
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollMs));
    }
  }
}

await runBench(USAGE, main);
