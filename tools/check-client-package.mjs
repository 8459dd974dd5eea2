// Checks that @runline/api-client is an installable package that works outside the monorepo:
//   1. builds it (libs/api-client/tsconfig.package.json: plain ESM and .d.ts, no path aliases),
//   2. `npm pack`s it and checks what the tarball holds,
//   3. installs the tarball into an empty project (its dependency openapi-fetch comes from the
//      npm cache or the registry),
//   4. typechecks a small consumer script there against the installed declarations (with this
//      repository's TypeScript) and compiles it,
//   5. starts the system (the compiled launcher, as `npm start` does: embedded PostgreSQL in a
//      temporary data dir, or a fresh database on TEST_DATABASE_URL's server) on a free port,
//   6. runs the consumer script: it imports the client, schedules a run with the demo chatbot
//      token the launcher prints, reads it, cancels it, and lists the organizations with the demo
//      owner's console JWT, checking each typed answer.
// Exits non-zero with a message naming the failed step. Run after `npm run build` (it starts
// dist/launcher/main.js): `npm run check:client-package`. `--keep` leaves the temporary
// directory (the tarball and the consumer project) for a look.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const packageDir = path.join(root, 'libs/api-client');
const keep = process.argv.includes('--keep');
const log = (message) => console.log(`check:client-package: ${message}`);

class CheckFailed extends Error {}
const fail = (step, detail) => {
  throw new CheckFailed(`${step} failed${detail ? `:\n${String(detail).trim()}` : ''}`);
};

/** Runs a command to completion; its output on failure. */
function run(step, command, args, options = {}) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, ...options });
  } catch (error) {
    fail(step, `${command} ${args.join(' ')}\n${error.stdout ?? ''}${error.stderr ?? ''}${error.stdout || error.stderr ? '' : error.message}`);
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'runline-client-package-'));
// Under /tmp, which every user can enter: embedded PostgreSQL runs as `postgres` when we are root.
chmodSync(work, 0o755);
let launcher;
let dropDatabase;

try {
  // 1. Build into a staging copy of the package directory, so nothing is written into the tree.
  const stage = path.join(work, 'package');
  mkdirSync(stage);
  for (const file of ['package.json', 'README.md', 'openapi.json']) cpSync(path.join(packageDir, file), path.join(stage, file));
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  run('building the package (tsc -p libs/api-client/tsconfig.package.json)', process.execPath, [tsc, '-p', path.join(packageDir, 'tsconfig.package.json'), '--outDir', path.join(stage, 'dist')]);
  const manifest = JSON.parse(readFileSync(path.join(stage, 'package.json'), 'utf8'));
  log(`built ${manifest.name}@${manifest.version}`);

  // 2. Pack, and check the tarball holds the built package and nothing of the sources.
  const packed = JSON.parse(run('npm pack', 'npm', ['pack', '--json', '--pack-destination', work], { cwd: stage }))[0];
  const tarball = path.join(work, packed.filename);
  const files = packed.files.map((file) => file.path).sort();
  const expected = ['README.md', 'dist/auth.d.ts', 'dist/auth.js', 'dist/index.d.ts', 'dist/index.js', 'dist/run-events.d.ts', 'dist/run-events.js', 'dist/schema.d.ts', 'dist/schema.js', 'openapi.json', 'package.json'];
  if (JSON.stringify(files) !== JSON.stringify(expected)) fail('checking the tarball', `it holds ${files.join(', ')}; expected ${expected.join(', ')}`);
  log(`packed ${packed.filename} (${files.length} files, ${Math.round(packed.size / 1024)} KiB)`);

  // 3. An empty project that installs the tarball, as a user's would.
  const consumer = path.join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'runline-client-consumer', version: '0.0.0', private: true, type: 'module' }, null, 2) + '\n');
  run('npm install of the tarball in an empty project', 'npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: consumer });
  const installed = JSON.parse(readFileSync(path.join(consumer, 'node_modules/@runline/api-client/package.json'), 'utf8'));
  if (!existsSync(path.join(consumer, 'node_modules/openapi-fetch/package.json'))) fail('npm install', 'openapi-fetch was not installed with the package');
  log(`installed ${installed.name}@${installed.version} and openapi-fetch into an empty project`);

  // 4. The consumer script, typechecked against the installed package (its own declarations,
  //    strictly, skipLibCheck off), then compiled to JavaScript.
  writeFileSync(path.join(consumer, 'check.ts'), consumerScript());
  writeFileSync(
    path.join(consumer, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          resolveJsonModule: true,
          strict: true,
          skipLibCheck: false,
          types: [],
          outDir: 'out',
        },
        files: ['check.ts'],
      },
      null,
      2,
    ) + '\n',
  );
  run('typechecking the consumer script against the installed declarations', process.execPath, [tsc, '-p', path.join(consumer, 'tsconfig.json')], { cwd: consumer });
  log('the consumer script typechecks against the installed declarations');

  // 5. The system, as `npm start` runs it.
  const entry = path.join(root, 'dist/launcher/main.js');
  if (!existsSync(entry)) fail('starting the system', `${entry} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  chmodSync(dataDir, 0o755);
  const environment = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), RUNLINE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  if (process.env.TEST_DATABASE_URL) {
    const database = await createDatabase(process.env.TEST_DATABASE_URL);
    dropDatabase = database.drop;
    environment.DATABASE_URL = database.url;
  }
  launcher = startProcess(process.execPath, [entry], environment);
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const demo = await demoCredentials(launcher, gatewayUrl, dataDir);
  log(`the system is up at ${gatewayUrl} (${environment.DATABASE_URL ? 'a fresh database on TEST_DATABASE_URL' : 'embedded PostgreSQL'})`);

  // 6. The consumer script against it.
  const output = run('the consumer script (node check.js in the empty project)', process.execPath, [path.join(consumer, 'out/check.js')], {
    cwd: consumer,
    env: {
      PATH: process.env.PATH,
      RUNLINE_URL: gatewayUrl,
      RUNLINE_ORG: demo.ORG,
      RUNLINE_PROJECT: demo.CHATBOT_PROJECT,
      RUNLINE_TOKEN: demo.CHATBOT_TOKEN,
      RUNLINE_CONSOLE_JWT: demo.CONSOLE_JWT,
    },
  });
  for (const line of output.trim().split('\n')) log(`  ${line}`);
  log(`OK: ${manifest.name}@${manifest.version} installs from its tarball and its typed calls work against a running system`);
} catch (error) {
  console.error(`check:client-package: ${error instanceof CheckFailed ? error.message : error.stack}`);
  if (launcher && !(error instanceof CheckFailed && error.message.includes('system'))) console.error(`launcher output (last 40 lines):\n${launcher.output().trim().split('\n').slice(-40).join('\n')}`);
  process.exitCode = 1;
} finally {
  await launcher?.stop();
  await dropDatabase?.().catch((error) => console.error(`check:client-package: could not drop the database: ${error.message}`));
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/**
 * The demo's ids and credentials, once the launcher has printed them: `NAME=value` lines of its
 * banner, or the same names in `<data dir>/demo.env` (with or without `export`, quoted or not).
 * Only these lines are read, so changes to the rest of the launcher's output do not matter.
 */
async function demoCredentials(process_, gatewayUrl, dataDir) {
  const wanted = ['ORG', 'CHATBOT_PROJECT', 'CHATBOT_TOKEN', 'CONSOLE_JWT'];
  const deadline = Date.now() + 180_000;
  const found = {};
  for (;;) {
    const demoEnv = path.join(dataDir, 'demo.env');
    const texts = [process_.output(), existsSync(demoEnv) ? readFileSync(demoEnv, 'utf8') : ''];
    for (const text of texts) {
      for (const [, name, value] of text.matchAll(/^[ \t]*(?:export[ \t]+)?([A-Z_]+)=["']?([^\s"']+)["']?[ \t]*$/gm)) if (wanted.includes(name)) found[name] ??= value;
    }
    if (wanted.every((name) => found[name]) && (await ready(gatewayUrl))) return found;
    if (process_.exited()) fail('starting the system', `the launcher exited (${process_.exitCode()}) before it was ready:\n${process_.output()}`);
    if (Date.now() > deadline) fail('starting the system', `no ready gateway with the demo credentials (${wanted.filter((name) => !found[name]).join(', ') || 'all found'}) within 180 s:\n${process_.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function ready(gatewayUrl) {
  try {
    return (await fetch(`${gatewayUrl}/health/ready`)).status === 200;
  } catch {
    return false;
  }
}

function startProcess(command, args, env) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    exitCode: () => child.exitCode ?? child.signalCode,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** An empty database on the server TEST_DATABASE_URL names (as the tests make theirs); drop() removes it. */
async function createDatabase(adminUrl) {
  const { default: pg } = await import('pg');
  const name = `runline_client_package_${randomBytes(5).toString('hex')}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** What a user of the package writes: only the package's own exports, typed answers checked. */
function consumerScript() {
  return String.raw`import { createRunlineClient, type RunlineClient, type Schema } from '@runline/api-client';

// No @types/node in the empty project: the one Node global used here.
declare const process: { env: Record<string, string | undefined> };

const [url, orgId, projectId, token, consoleJwt] = ['RUNLINE_URL', 'RUNLINE_ORG', 'RUNLINE_PROJECT', 'RUNLINE_TOKEN', 'RUNLINE_CONSOLE_JWT'].map((name) => {
  const value = process.env[name];
  if (!value) throw new Error(name + ' is not set');
  return value;
}) as [string, string, string, string, string];

function expect(what: string, condition: boolean, actual: unknown): void {
  if (!condition) throw new Error(what + ': got ' + JSON.stringify(actual));
}

// The document ships with the package, under its own export.
const { default: document } = await import('@runline/api-client/openapi.json', { with: { type: 'json' } });
expect('the packaged document is OpenAPI 3.1', document.openapi === '3.1.0', document.openapi);

const runline: RunlineClient = createRunlineClient(url, token);

// Schedule a run of the demo chatbot's flow an hour ahead (with a further top-level field and an idempotency key).
const started = await runline.POST('/v1/orgs/{orgId}/flows/{projectId}/trigger-async', {
  params: { path: { orgId, projectId }, header: { 'x-idempotency-key': 'client-package-' + Date.now() } },
  body: { event: 'order.created', customerId: 'c-1042', orderId: '42', delaySeconds: 3600 },
});
expect('trigger-async answers 202', started.response.status === 202, started.response.status);
const accepted: Schema<'RunAnswer'> | undefined = started.data;
expect('the run is SCHEDULED', accepted?.status === 'SCHEDULED' && typeof accepted.scheduledFor === 'string', accepted);
const invocationId: string = accepted!.invocationId!;
console.log('scheduled run ' + invocationId + ' for ' + accepted!.scheduledFor);

// Read it back with the same token: the typed Invocation.
const read = await runline.GET('/v1/orgs/{orgId}/external-invocations/{invocationId}', { params: { path: { orgId, invocationId } } });
const invocation: Schema<'Invocation'> | undefined = read.data;
expect('GET answers the run', read.response.status === 200 && invocation?.invocationId === invocationId && invocation.mode === 'ASYNC', read.data ?? read.error);
const status: 'SCHEDULED' | 'QUEUED' | 'RUNNING' | 'SUSPENDED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED' = invocation!.status;
expect('it is still SCHEDULED', status === 'SCHEDULED', status);

// Cancel it.
const cancelled = await runline.PATCH('/v1/orgs/{orgId}/external-invocations/{invocationId}', { params: { path: { orgId, invocationId } }, body: { action: 'cancel' } });
expect('PATCH cancel answers the CANCELLED run', cancelled.response.status === 200 && cancelled.data?.status === 'CANCELLED', cancelled.data ?? cancelled.error);
console.log('cancelled it: ' + cancelled.data!.status + ', schedulerStatus ' + cancelled.data!.schedulerStatus);

// A refusal is typed too.
const missing = await runline.GET('/v1/orgs/{orgId}/external-invocations/{invocationId}', {
  params: { path: { orgId, invocationId: '00000000-0000-4000-8000-000000000000' } },
});
const refusal: { error: string } | undefined = missing.error;
expect('an unknown run is a typed 404', missing.response.status === 404 && refusal?.error === 'Invocation not found', refusal);

// The console API with the demo owner's JWT.
const organizations = await createRunlineClient(url, consoleJwt).GET('/v1/orgs');
const mine = organizations.data?.data.find((organization) => organization.orgId === orgId);
expect('the demo owner sees the demo organization as OWNER', mine?.role === 'OWNER', organizations.data ?? organizations.error);
console.log('listed ' + organizations.data!.data.length + ' organization(s) as the demo owner: ' + mine!.name + ' (' + mine!.role + ')');

/** Never called: the compiler refuses what the document does not have. */
export function refusedByTheCompiler(client: RunlineClient): void {
  // @ts-expect-error: the client knows the document's paths; this one is not in it.
  void client.GET('/v1/no-such-route');
  // @ts-expect-error: action is one of cancel, reschedule, approve, reject.
  void client.PATCH('/v1/orgs/{orgId}/external-invocations/{invocationId}', { params: { path: { orgId: 'o', invocationId: 'i' } }, body: { action: 'pause' } });
}
`;
}
