import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HttpClient } from '@runline/testing';
import { deliver } from './support/hook-deliveries.js';
import { compiledEntry, freePort, REPO_ROOT, runNode, waitForOk, type RunningProcess } from './support/processes.js';

/**
 * `npm start`'s process (compiled launcher): embedded PostgreSQL, the in-process bus, all seven
 * services, the demo organization, a banner that comes first and whose curl lines work when
 * pasted, and the README's first run.
 */
describe('embedded mode (npm start)', () => {
  /** Where `npm start` is run from: the data directory is its `.runline`, as by default. */
  let workDir: string;
  let dataDir: string;
  let port: number;
  let launcher: RunningProcess | undefined;

  beforeAll(async () => {
    // Under /tmp, which every user can enter: embedded PostgreSQL runs as `postgres` when we are root.
    workDir = await mkdtemp(path.join(tmpdir(), 'runline-launcher-'));
    await chmod(workDir, 0o755);
    dataDir = path.join(workDir, '.runline');
    port = await freePort();
  });
  afterAll(async () => {
    await launcher?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  /** Without LOG_LEVEL, as a newcomer runs it: the services' lines go to the log file. */
  const start = async (extraEnv: NodeJS.ProcessEnv = {}) => {
    const env = { PATH: process.env.PATH, PORT: String(port), RUNLINE_DATA_DIR: dataDir, ...extraEnv };
    launcher = runNode(compiledEntry('launcher/main.js'), [], env);
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, launcher, 90_000);
    const deadline = Date.now() + 30_000;
    while (!launcher.output().includes('Try (each line works as pasted):')) {
      if (Date.now() > deadline) throw new Error(`no banner:\n${launcher.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return launcher;
  };

  it('prints demo credentials and curl lines that get documented answers', async () => {
    const running = await start();
    const banner = running.output();
    const value = (name: string) => new RegExp(`${name}=(\\S+)`).exec(banner)?.[1];
    const [org, chatbot, jwt, chatbotToken, automationToken] = ['ORG', 'CHATBOT_PROJECT', 'CONSOLE_JWT', 'CHATBOT_TOKEN', 'AUTOMATION_TOKEN'].map(value);
    expect(chatbotToken).toMatch(/^rl_ext_/);
    expect(automationToken).toMatch(/^rl_ext_/);
    expect(banner).toContain('(created now)');
    // Nothing the frameworks deprecate is in use (Node prints such warnings once per process).
    expect(banner).not.toMatch(/Deprecation|DeprecationWarning|\[FSTDEP\d+\]/);

    // The banner comes first (at most five lines before it); every log line is in the file it names.
    const lines = banner.split('\n');
    const linesBeforeBanner = lines.slice(0, lines.findIndex((line) => line.includes('Runline is running'))).filter((line) => line.trim());
    expect(linesBeforeBanner.slice(5)).toEqual([]);
    const logFile = path.join(dataDir, 'runline.log');
    expect(banner).toContain(`Log:       ${logFile} (this terminal shows only warnings and errors`);
    const logLines = (await readFile(logFile, 'utf8')).split('\n').filter(Boolean);
    expect(logLines.filter((line) => line.includes('"level":30')).length).toBeGreaterThan(20);
    expect(logLines.some((line) => line.includes('"msg":"migrations applied"'))).toBe(true);
    // The demo's variables for the README's first run, readable by their owner only.
    const demoEnv = path.join(dataDir, 'demo.env');
    expect(banner).toContain(`source ${demoEnv}`);
    expect((await stat(demoEnv)).mode & 0o777).toBe(0o600);
    expect(await readFile(demoEnv, 'utf8')).toContain(`export AUTOMATION_TOKEN='${automationToken}'`);

    const curlLines = banner.split('\n').filter((line) => line.trim().startsWith('curl '));
    expect(curlLines.length).toBeGreaterThanOrEqual(4);
    const answers = [];
    for (const line of curlLines) answers.push(await runCurlLine(line.trim()));
    expect(answers[0]).toMatchObject({ status: 200, body: { externalApiEnabled: true, defaultEnrollmentPolicy: 'ONE_TIME' } });
    expect(answers[1]).toMatchObject({ status: 200, body: { data: [expect.objectContaining({ name: 'demo' })] } });
    expect(answers[2]).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
    expect(answers[3]).toMatchObject({ status: 400, body: { error: 'Unsupported API version', code: 'UNSUPPORTED_API_VERSION' } });
    expect(answers[4]).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(answers[5]).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } } });
    expect(answers[6]).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: { messages: ['Hi Ada'] } } });
    expect(answers[7]).toMatchObject({ status: 202, body: { status: 'QUEUED', scheduledFor: null } });
    const run = await readUntilFinal(
      `http://127.0.0.1:${port}/v1/orgs/${org}/external-invocations/${(answers[7]!.body as { invocationId: string }).invocationId}`,
      automationToken!,
    );
    expect(run).toMatchObject({ status: 'SUCCEEDED', result: { ok: true, orderId: '42' }, targetType: 'AUTOMATION', mode: 'ASYNC' });
    expect([org, chatbot, jwt].every(Boolean)).toBe(true);

    // The webhook service runs in the same process: a hook's signed delivery starts a run.
    const http = new HttpClient(`http://127.0.0.1:${port}`);
    const hook = await http.post<{ id: string; secret: string; url: string }>(`/v1/orgs/${org}/projects/${chatbot}/webhooks`, { name: 'demo hook' }, { bearer: jwt });
    expect(hook).toMatchObject({ status: 201, body: { url: `http://127.0.0.1:${port}/v1/hooks/${hook.body.id}` } });
    const delivered = await deliver(http, hook.body.id, hook.body.secret, { event: 'order.created', customerId: 'c-1', orderId: '7' });
    expect(delivered).toMatchObject({ status: 202, body: { status: 'QUEUED' } });

    // The one-click sign-in: the console's address with the demo owner's JWT in the fragment.
    expect(banner).toContain(`Console:   http://127.0.0.1:${port}/console/#token=${jwt}`);
    const root = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/console/']);
    const page = await fetch(`http://127.0.0.1:${port}/console/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await page.text()).toContain('<div id="root"></div>');
    expect(await running.stop()).toBe(0);
    launcher = undefined;
  }, 120_000);

  it("runs the README's first run as pasted, and the README shows the console line as it is printed", async () => {
    const running = await start();
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
    const firstRun = blocks.find((block) => block.includes('source .runline/demo.env'));
    expect(firstRun).toBeDefined();
    // What the README says each curl answers.
    expect(firstRun).toContain('"status":"QUEUED"');
    expect(firstRun).toContain('"result":{"ok":true,"orderId":"42"}');
    expect(firstRun).toContain('"result":{"messages":["Hi Ada"]');

    // Run from the directory `npm start` ran in, as a reader pastes it.
    const { stdout } = await promisify(execFile)('bash', ['-e', '-c', firstRun!], { cwd: workDir, env: { PATH: process.env.PATH } });
    const answers = stdout
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(answers).toHaveLength(3);
    expect(answers[0]).toEqual({ invocationId: expect.any(String), status: 'QUEUED', scheduledFor: null });
    expect(answers[1]).toMatchObject({ invocationId: answers[0]!.invocationId, targetType: 'AUTOMATION', mode: 'ASYNC' });
    // An async run may still be on its way when it is read: the README says so; then it ends as shown.
    const [org, automationToken] = ['ORG', 'AUTOMATION_TOKEN'].map((name) => new RegExp(`${name}=(\\S+)`).exec(running.output())![1]!);
    const run = ['QUEUED', 'RUNNING'].includes(String(answers[1]!.status))
      ? await readUntilFinal(`http://127.0.0.1:${port}/v1/orgs/${org}/external-invocations/${String(answers[0]!.invocationId)}`, automationToken!)
      : answers[1];
    expect(run).toMatchObject({ status: 'SUCCEEDED', result: { ok: true, orderId: '42' } });
    expect(answers[2]).toMatchObject({ status: 'SUCCEEDED', result: { messages: ['Hi Ada'] }, sessionId: expect.any(String) });

    // The console line in the README is the one `npm start` prints on the default port.
    const printed = /^Console: +http:\/\/127\.0\.0\.1:\d+\/console\/#token=\S+$/m.exec(running.output())?.[0];
    expect(printed).toBeDefined();
    const asDocumented = printed!.replace(`127.0.0.1:${port}/`, '127.0.0.1:3000/').replace(/#token=\S+$/, '#token=…');
    expect(readme.split('\n')).toContain(asDocumented);
    expect(await running.stop()).toBe(0);
    launcher = undefined;
  }, 120_000);

  it('on a second start keeps the demo organization and prints fresh tokens, revoking the old ones', async () => {
    // A LOG_LEVEL set by the user is honoured on the terminal.
    const first = await start({ LOG_LEVEL: 'info' }).then((l) => l.output());
    expect(first).toContain(`Log:       ${path.join(dataDir, 'runline.log')} and this terminal, at LOG_LEVEL=info`);
    expect(first).toMatch(/^\{"level":30,.*"msg":"schema up to date"/m);
    expect(first).toContain('(from an earlier start; tokens below are new)');
    const token = /CHATBOT_TOKEN=(\S+)/.exec(first)![1];
    const org = /ORG=(\S+)/.exec(first)![1];
    expect(await launcher!.stop()).toBe(0);
    await start();
    const answer = await fetch(`http://127.0.0.1:${port}/v1/orgs/${org}/external-invocations/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(answer.status).toBe(401);
  }, 180_000);
});

/** Runs a printed `curl -s [-X METHOD] URL [-H "Name: value"]...` line with fetch, as a shell would. */
async function runCurlLine(line: string): Promise<{ status: number; body: unknown }> {
  const method = /-X (\w+)/.exec(line)?.[1] ?? 'GET';
  const url = /(http:\/\/\S+)/.exec(line)![1]!;
  const headers: Record<string, string> = {};
  for (const [, name, headerValue] of line.matchAll(/-H "([^:]+): ([^"]*)"/g)) headers[name!.toLowerCase()] = headerValue!;
  const body = /-d '([^']*)'/.exec(line)?.[1];
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: response.status, body: await response.json() };
}

/** GETs a run until its status is final. */
async function readUntilFinal(url: string, token: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = (await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
    if (['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(String(run.status)) || Date.now() > deadline) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
