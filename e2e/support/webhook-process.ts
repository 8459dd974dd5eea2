import { TEST_SECRETS_KEY, testNatsUrl, type TestSystem } from '@runline/testing';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './processes.js';

/**
 * The webhook service as it is deployed: its own process (the compiled build), so the test's
 * certificate authority reaches its provider calls through NODE_EXTRA_CA_CERTS, which node
 * reads at start. `extra` points it at the provider fakes (STRIPE_API_URL, GITHUB_API_URL).
 */
export async function startWebhookProcess(system: TestSystem, caFile: string, extra: NodeJS.ProcessEnv = {}): Promise<RunningProcess> {
  const port = await freePort();
  const started = runNode(compiledEntry('services/webhook/main.js'), [], {
    PATH: process.env.PATH,
    DATABASE_URL: system.database.url,
    NATS_URL: testNatsUrl(),
    BUS_PREFIX: system.busPrefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    SECRETS_KEY: TEST_SECRETS_KEY,
    OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: caFile,
    RUN_MIGRATIONS: 'true',
    LOG_LEVEL: 'debug',
    ...extra,
  });
  await waitForOk(`http://127.0.0.1:${port}/health/ready`, started);
  reportEarlyExit(started);
  return started;
}

/**
 * Prints the process's last output when it exits by itself (an exit code, not a signal a test
 * sent it) while its tests still run: the tests then only see 503 `Webhook service unavailable`,
 * and without this the reason would be lost with the process.
 */
function reportEarlyExit(started: RunningProcess): void {
  let stopping = false;
  const stop = started.stop.bind(started);
  started.stop = (timeoutMs?: number) => {
    stopping = true;
    return stop(timeoutMs);
  };
  started.child.once('exit', (code) => {
    if (!stopping && code !== null && code !== 0) console.error(`the webhook process exited (${code}) while its tests ran; its last output:\n${started.output().slice(-6000)}`);
  });
}
