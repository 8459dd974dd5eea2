import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { consoleJwt, createTestDatabase, deletePrefixedStreams, HttpClient, testNatsUrl, uniqueBusPrefix, type TestDatabase } from '@runline/testing';
import { parse } from 'yaml';
import { VALID_CHATBOT_DEFINITION } from './gateway-fixtures.js';
import { freePort, REPO_ROOT, runProcess, waitForOk, type RunningProcess } from './support/processes.js';

const SERVICES = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'];

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
}

/** `${NAME:-default}` as Compose interpolates it, from `environment` (the defaults when unset). */
function interpolate(value: string, environment: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Z_]+)(?::-([^}]*))?\}/g, (_match, name: string, fallback = '') => environment[name] || fallback);
}

/**
 * `deploy/compose.yaml` as Compose would run it, without Docker (CI has no daemon): the file's
 * services, images and dependencies are checked, and then its one-shot `migrate` and the seven
 * services are started exactly as their containers would start them, through the image's
 * entry point (`deploy/entrypoint.sh` next to `dist/`, as in the image) with each service's
 * Compose environment. Only the addresses differ: the test's PostgreSQL, NATS and ports stand
 * in for the containers'. A run then goes through the stack with the Compose defaults (console
 * JWT secret, token prefix).
 */
describe('the Compose stack', () => {
  const compose = parse(readFileSync(path.join(REPO_ROOT, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  let database: TestDatabase;
  let appDir: string;
  const busPrefix = uniqueBusPrefix();
  const running = new Map<string, { process: RunningProcess; url: string }>();

  afterAll(async () => {
    await Promise.all([...running.values()].map(({ process }) => process.stop()));
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
    if (appDir) rmSync(appDir, { recursive: true, force: true });
  });

  it('runs every service from the one image, after the migration, on healthy PostgreSQL and NATS', () => {
    const runline = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
    expect(runline.map(([name]) => name).sort()).toEqual(['migrate', ...SERVICES].sort());
    for (const [name, service] of runline) {
      expect({ name, image: service.image, build: service.build }).toEqual({ name, image: 'runline:dev', build: { context: '..', dockerfile: 'deploy/Dockerfile' } });
      if (name === 'migrate') continue;
      expect({ name, service: service.environment?.SERVICE, dependsOn: service.depends_on }).toEqual({
        name,
        service: name,
        dependsOn: {
          migrate: { condition: 'service_completed_successfully' },
          postgres: { condition: 'service_healthy' },
          nats: { condition: 'service_healthy' },
        },
      });
    }
    expect(compose.services.migrate).toMatchObject({ command: ['migrate'], environment: { SERVICE: 'all' } });
    // Clients reach the gateway only.
    expect(Object.entries(compose.services).filter(([, service]) => service.ports?.length).map(([name]) => name)).toEqual(['gateway']);
  });

  it('migrates, starts the seven services through the image entry point, and serves a run', async () => {
    database = await createTestDatabase();
    // The image keeps entrypoint.sh next to dist/ (deploy/Dockerfile): the same layout here.
    appDir = mkdtempSync(path.join(tmpdir(), 'runline-compose-'));
    copyFileSync(path.join(REPO_ROOT, 'deploy/entrypoint.sh'), path.join(appDir, 'entrypoint.sh'));
    symlinkSync(path.join(REPO_ROOT, 'dist'), path.join(appDir, 'dist'));
    const hostEnvironment = { PATH: process.env.PATH };
    const environmentOf = (service: ComposeService, port: number): NodeJS.ProcessEnv => {
      const declared = Object.fromEntries(Object.entries(service.environment ?? {}).map(([key, value]) => [key, interpolate(String(value), hostEnvironment)]));
      return { ...hostEnvironment, ...declared, DATABASE_URL: database.url, NATS_URL: testNatsUrl(), BUS_PREFIX: busPrefix, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    };
    const start = (service: ComposeService, port: number) => runProcess('sh', [path.join(appDir, 'entrypoint.sh'), ...(service.command ?? [])], environmentOf(service, port));

    const migration = start(compose.services.migrate!, 0);
    expect({ exit: await migration.exit(120_000), output: migration.output() }).toMatchObject({ exit: 0 });
    // One after the other, as Compose may start them: seven Node processes booting at once on a
    // loaded two-core machine share the CPU seven ways, and one missed its readiness deadline in CI.
    for (const name of SERVICES) {
      const port = await freePort();
      const started = start(compose.services[name]!, port);
      const url = `http://127.0.0.1:${port}`;
      running.set(name, { process: started, url });
      await waitForOk(`${url}/health/ready`, started);
    }

    // The Compose defaults are what a newcomer signs in with.
    const gateway = compose.services.gateway!.environment!;
    const owner = consoleJwt('compose-owner', { secret: interpolate(gateway.CONSOLE_JWT_SECRET!, {}) });
    const http = new HttpClient(running.get('gateway')!.url);
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Compose' }, { bearer: owner });
    const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: owner });
    const base = `/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}`;
    expect((await http.put(`${base}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: owner })).status).toBe(200);
    expect((await http.post(`${base}/publish`, undefined, { bearer: owner })).status).toBe(200);
    const token = await http.post<{ token: string }>(`${base}/api-tokens`, { name: 't', scopes: ['flow:trigger'] }, { bearer: owner });
    expect(token.body.token).toMatch(new RegExp(`^${interpolate(gateway.API_TOKEN_PREFIX!, {})}_ext_`));
    const run = await http.post(`/v1/orgs/${org.body.orgId}/flows/${project.body.projectId}/trigger`, { event: 'order', customerId: 'c-1', orderId: 'o-1' }, { bearer: token.body.token });
    expect(run).toMatchObject({ status: 200, body: { status: 'SUCCEEDED' } });
  }, 300_000);
});
