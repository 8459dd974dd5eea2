// Callback deliveries per second: DeliverCallback commands published on NATS, delivered by the
// callback service (its own process, as deployed) over HTTPS to a local receiver (its own
// process), each attempt recorded with its CallbackAttempted event through the outbox. The
// baseline, measured in the same run against the same receiver: a raw signed-POST loop with
// keep-alive connections. Prints both rates and the ratio. Needs `npm run build`, PostgreSQL
// and NATS (NATS_URL, default nats://127.0.0.1:4222). `BENCH_CPU_PROFILE=1`: the callback
// service runs under `--cpu-prof`; its profile of the measured deliveries is summarized at the end.
// Then retry lateness: --retries callbacks whose first attempt the receiver answers 500, and how
// much later than its 0.5 s wait each second attempt arrives (the e2e tests check only that it
// never comes early; how late it comes depends on the machine, so it is measured here).
//
//   npm run bench:callbacks [-- --count 5000] [--retries 200] [--dist <another build's dist/>]
import { randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as Bus from '@runline/bus';
import type * as Contracts from '@runline/contracts';
import type * as Runtime from '@runline/runtime';
import { openBenchDatabase } from './support/bench-database.js';
import { cpuProfileFlags, profileFiles, summarizeProfile } from './support/cpu-profile.js';
import type { ClockWindow } from './support/measurement.js';
import { printFigure } from './support/figures.js';
import { indent } from './support/report.js';
import { monotonicMicros } from './support/rounds.js';
import { callbackBody, signedPostLoop } from './support/callback-load.js';
import { distributionOf } from './support/distribution.js';
import { freePort, startChildServer, type ChildServer } from './support/child-server.js';
import { BENCH_DIR, REPO_ROOT } from './support/cli.js';
import { deleteStreamsWithPrefix } from './support/nats-streams.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '64' },
    retries: { type: 'string', default: '200' },
    dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
  },
});
const count = Number(values.count);
const retries = Number(values.retries);
const concurrency = Number(values.concurrency);
// Another build (round 1's, say) is measured by the same benchmark code.
const dist = path.resolve(values.dist);
const register = path.join(BENCH_DIR, 'register.mjs');
const workDir = path.join(os.tmpdir(), `runline-bench-callbacks-${randomBytes(4).toString('hex')}`);
mkdirSync(workDir, { recursive: true });
const profileDir = path.join(workDir, 'profiles');
const load = <T>(relative: string): Promise<T> => import(pathToFileURL(path.join(dist, 'node_modules', '@runline', relative, 'index.js')).href) as Promise<T>;

const contracts = await load<typeof Contracts>('contracts');
const { JetStreamBus } = await load<typeof Bus>('bus');
const { SecretBox } = await load<typeof Runtime>('runtime');

// A certificate for 127.0.0.1, trusted by the callback service through NODE_EXTRA_CA_CERTS.
const keyFile = path.join(workDir, 'key.pem');
const certFile = path.join(workDir, 'cert.pem');
execFileSync('/usr/bin/openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile,
  '-days', '1', '-subj', '/CN=bench-receiver', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });

const children: ChildServer[] = [];
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = `bench${randomBytes(5).toString('hex')}`;
const database = await openBenchDatabase(process.env);
const secretsKey = randomBytes(24).toString('hex');
let measured: ClockWindow | undefined;
try {
  const receiverPort = await freePort();
  const controlPort = await freePort();
  const receiver = await startChildServer({
    name: 'receiver',
    args: ['--import', register, path.join(BENCH_DIR, 'servers', 'callback-receiver.server.ts')],
    env: { ...process.env, RECEIVER_PORT: String(receiverPort), CONTROL_PORT: String(controlPort), RECEIVER_KEY_FILE: keyFile, RECEIVER_CERT_FILE: certFile },
    port: controlPort,
    readyPath: '/health',
    logFile: path.join(workDir, 'receiver.log'),
  });
  children.push(receiver);
  const received = async () => Number(await (await fetch(`http://127.0.0.1:${controlPort}/count`)).text());
  const receiverUrl = `https://127.0.0.1:${receiverPort}/hook`;

  const servicePort = await freePort();
  const service = await startChildServer({
    name: 'callback',
    args: [...cpuProfileFlags(profileDir), '--import', register, path.join(BENCH_DIR, 'servers', 'callback-service.server.ts')],
    env: {
      ...process.env, RUNLINE_DIST: dist, DATABASE_URL: database.url, NATS_URL: natsUrl, BUS_PREFIX: prefix, PORT: String(servicePort),
      HOST: '127.0.0.1', SECRETS_KEY: secretsKey, OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', NODE_EXTRA_CA_CERTS: certFile,
      RUN_MIGRATIONS: 'true', LOG_LEVEL: 'warn',
    },
    port: servicePort,
    readyPath: '/health/ready',
    logFile: path.join(workDir, 'callback.log'),
    readyTimeoutMs: 60_000,
  });
  children.push(service);

  const ca = readFileSync(certFile, 'utf8');
  // Warm-up of both paths (connections, JIT), then the measured runs.
  await signedPostLoop(receiverUrl, ca, 500, concurrency);
  const bus = await JetStreamBus.connect({ url: natsUrl, prefix, name: 'bench' });
  const sealed = new SecretBox(secretsKey).seal('bench-secret');
  const orgId = randomUUID();
  const projectId = randomUUID();
  const commands = (n: number, url = receiverUrl) =>
    Array.from({ length: n }, () => {
      const invocationId = randomUUID();
      return contracts.toBusMessage(
        contracts.newEnvelope({
          type: contracts.EVENT_TYPES.DELIVER_CALLBACK,
          payload: contracts.create(contracts.DeliverCallbackSchema, { invocationId, url, sealedSecret: sealed, body: callbackBody(invocationId), runStatus: 'SUCCEEDED' }),
          orgId,
          projectId,
          invocationId,
        }),
      );
    });
  const deliver = async (messages: ReturnType<typeof commands>) => {
    const before = await received();
    const started = performance.now();
    for (let i = 0; i < messages.length; i += 200) await Promise.all(messages.slice(i, i + 200).map((message) => bus.publish(message)));
    while ((await received()) - before < messages.length) {
      if (performance.now() - started > 120_000) throw new Error('deliveries did not complete within 120 s');
      await sleep(10);
    }
    return messages.length / ((performance.now() - started) / 1000);
  };
  await deliver(commands(500));

  const baseline = await signedPostLoop(receiverUrl, ca, count, concurrency);
  const startUs = monotonicMicros();
  const cpuBefore = service.cpuSeconds();
  const system = await deliver(commands(count));
  const cpuAfter = service.cpuSeconds();
  measured = { startUs, endUs: monotonicMicros() };
  const baselineAgain = await signedPostLoop(receiverUrl, ca, count, concurrency);
  const baselineRate = (baseline + baselineAgain) / 2;

  // Retry lateness: the second attempts come from the timers armed for their time (0.5 s after
  // the first attempt ended), so each gap beyond 500 ms is how late one came (plus the first
  // attempt's answer, well under a millisecond here).
  const retryGaps = async () => JSON.parse(await (await fetch(`http://127.0.0.1:${controlPort}/retry-gaps`)).text()) as number[];
  const retryMessages = commands(retries, `https://127.0.0.1:${receiverPort}/retry`);
  // One at a time, 10 ms apart: the lateness of a retry, not of a burst of them.
  for (const message of retryMessages) {
    await bus.publish(message);
    await sleep(10);
  }
  const retryStarted = performance.now();
  while ((await retryGaps()).length < retries) {
    if (performance.now() - retryStarted > 120_000) throw new Error('retried deliveries did not complete within 120 s');
    await sleep(50);
  }
  const lateness = distributionOf((await retryGaps()).map((gap) => gap - 500));
  await bus.close();

  console.log(`callback deliveries: ${count} per measurement, baseline concurrency ${concurrency}`);
  console.log(`  raw signed POST loop (baseline, mean of before/after): ${baselineRate.toFixed(0)}/s (${baseline.toFixed(0)}, ${baselineAgain.toFixed(0)})`);
  console.log(`  callback service (NATS → deliver → record + CallbackAttempted): ${system.toFixed(0)}/s`);
  // Steadier than the rate on a shared machine: what one delivery costs the service itself.
  if (cpuBefore !== undefined && cpuAfter !== undefined) console.log(`  callback service CPU per delivery: ${(((cpuAfter - cpuBefore) * 1e6) / count).toFixed(0)} µs`);
  console.log(`  ratio: ${((system / baselineRate) * 100).toFixed(1)}% of the baseline (goal ≥ 30% and ≥ 1000/s)`);
  printFigure({ benchmark: 'callbacks', figure: 'deliveries/s (baseline: raw signed-POST loop)', value: Math.round(system), baseline: Math.round(baselineRate), goal: '>= 30% of baseline and >= 1000', met: system >= 1000 && system / baselineRate >= 0.3 });
  console.log(
    `  retry lateness (second attempt after the 0.5 s wait, ${lateness.count} callbacks): p50 ${lateness.p50.toFixed(1)} ms, p99 ${lateness.p99.toFixed(1)} ms, max ${lateness.max.toFixed(1)} ms (goal: max ≤ 250 ms)`,
  );
} finally {
  for (const child of children.reverse()) await child.stop();
  await deleteStreamsWithPrefix(natsUrl, prefix).catch(() => undefined);
  await database.drop();
}
for (const file of measured ? profileFiles(profileDir) : []) {
  console.log(`\nCPU profile of the callback service (open in Chrome DevTools or speedscope): ${file}`);
  console.log(`the measured deliveries:\n${indent(summarizeProfile(file, [measured]))}`);
}
