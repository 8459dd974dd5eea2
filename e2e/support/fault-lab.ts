import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@runline/db';
import { retry } from '@runline/runtime';
import { HttpClient, queryDatabase, TEST_CONSOLE_JWT_SECRET, TEST_SECRETS_KEY, type HttpResult } from '@runline/testing';
import { createProject, issueToken, publishDefinition, type ProjectFixture } from '../gateway-fixtures.js';
import { createHook, deliver, type CreatedHook } from './hook-deliveries.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './https-receiver.js';
import { eventually } from './lifecycle-support.js';
import { PollingEndpoint } from './polling-endpoint.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './processes.js';

export const SERVICES = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'] as const;
export type ServiceName = (typeof SERVICES)[number];
export type Fault = { kind: 'kill'; service: ServiceName } | { kind: 'nats-restart' } | { kind: 'postgres-restart' };

/** What one fault did to the runs made around it. */
export interface FaultOutcome {
  fault: string;
  /** Runs the API accepted (async 202, scheduled 202, sync 200, a hook delivery's 202 or 409), each with its own key. */
  accepted: number;
  /** Accepted runs that never reached a final status. */
  lost: number;
  /** Runs whose http node was called more than once, or that started more than once. */
  doubled: number;
  /** Runs that ended "Run was interrupted" because the process running them died. */
  interrupted: number;
  /** Final async runs with no callback at the receiver. */
  callbacksMissing: number;
  /** Answers other than the documented ones (2xx, 429, 503), e.g. 500, while the fault lasted. */
  unexpectedAnswers: Record<string, number>;
  /** The first few of them, with their bodies, to say what went wrong. */
  unexpectedSamples: string[];
  /** Polled items that were started as runs in the phase, and of those, how many ended. */
  polledStarted: number;
  polledEnded: number;
  /** From the restart of what failed until a new async run is accepted and it reports ready. */
  recoveryMs: number;
}

export function describeFault(fault: Fault): string {
  return fault.kind === 'kill' ? `kill -9 ${fault.service}` : fault.kind === 'nats-restart' ? 'NATS restart' : 'PostgreSQL restart';
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/** The API did not take a run (yet): the client resends it. */
class NotAccepted extends Error {
  constructor(key: string) {
    super(`run ${key} was never accepted`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The whole system as an operator runs it: the seven services as separate processes, a PostgreSQL
 * and a nats-server of the lab's own (so they can be restarted without touching anyone else's),
 * a customer's HTTPS callback receiver, a plain HTTP server that counts each run's http-node
 * call, and a polled endpoint. `inject` puts the system through one fault while runs are in
 * flight and accounts for every run made around it.
 */
export class FaultLab {
  private readonly processes = new Map<ServiceName, RunningProcess>();
  private readonly ports = new Map<ServiceName, number>();
  private postgres: EmbeddedPostgres | undefined;
  private nats: ChildProcess | undefined;
  private http!: HttpClient;
  private project!: ProjectFixture;
  private token!: string;
  /** A project whose flow is self-contained: its async runs are executed as their requests wait. */
  private selfContained!: { project: ProjectFixture; token: string };
  private hook!: CreatedHook;
  private environment!: NodeJS.ProcessEnv;
  private phase = 0;

  private constructor(
    private readonly workDir: string,
    private readonly natsPort: number,
    private readonly postgresPort: number,
    private readonly certificate: TestCertificate,
    readonly receiver: HttpsReceiver,
    private readonly counter: Server,
    /** Calls of each run's http node, by the run's key. */
    private readonly hits: Map<string, number>,
    private readonly endpoint: PollingEndpoint,
  ) {}

  static async start(): Promise<FaultLab> {
    const workDir = await mkdtemp(path.join(tmpdir(), 'runline-faults-'));
    // PostgreSQL runs as the OS user postgres when the tests run as root: let it through.
    await chmod(workDir, 0o755);
    const certificate = await selfSignedCertificate();
    const { counter, hits } = await startHitCounter();
    const lab = new FaultLab(workDir, await freePort(), await freePort(), certificate, await startHttpsReceiver(certificate), counter, hits, await PollingEndpoint.start());
    try {
      await lab.boot();
    } catch (error) {
      await lab.stop();
      throw error;
    }
    return lab;
  }

  private async boot(): Promise<void> {
    await this.startPostgres();
    await this.startNats();
    this.environment = {
      PATH: process.env.PATH,
      DATABASE_URL: this.database().url,
      NATS_URL: `nats://127.0.0.1:${this.natsPort}`,
      BUS_PREFIX: 'faults',
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'error',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: this.certificate.caFile,
      // Short leases and sweeps, so work a killed process held is taken over in seconds.
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '200',
      BUS_ACK_WAIT_MS: '2000',
      CALLBACK_LEASE_MS: '11000',
      CALLBACK_SWEEP_INTERVAL_MS: '200',
      POLLING_LEASE_MS: '3000',
      POLLING_SWEEP_INTERVAL_MS: '200',
      SCHEDULER_SWEEP_INTERVAL_MS: '200',
      DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS: '1000',
    };
    for (const service of SERVICES) {
      const migration = runNode(compiledEntry(`services/${service}/main.js`), ['migrate'], this.environment);
      const code = await migration.exit();
      if (code !== 0) throw new Error(`migrating ${service} exited ${code}: ${migration.output()}`);
    }
    for (const service of SERVICES) this.ports.set(service, await freePort());
    await Promise.all(SERVICES.map((service) => this.startService(service)));
    this.http = new HttpClient(`http://127.0.0.1:${this.ports.get('gateway')}`);

    const hitUrl = `http://127.0.0.1:${(this.counter.address() as AddressInfo).port}/hit/{{ payload.k }}`;
    this.project = await createProject(this.http, 'CHATBOT');
    await publishDefinition(this.http, this.project, {
      schemaVersion: 1,
      bot: { start: 'end', nodes: { end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'call',
        nodes: { call: { type: 'http', method: 'GET', url: hitUrl, next: 'done' }, done: { type: 'end' } },
      },
    });
    this.token = await this.settleProject(this.project);
    const selfContained = await createProject(this.http, 'CHATBOT');
    await publishDefinition(this.http, selfContained, {
      schemaVersion: 1,
      bot: { start: 'end', nodes: { end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'say',
        nodes: { say: { type: 'message', text: 'Run {{ payload.k }}', next: 'done' }, done: { type: 'end' } },
      },
    });
    this.selfContained = { project: selfContained, token: await this.settleProject(selfContained) };
    // The API's highest per-hook limit: retries through an outage must not be refused as too many.
    this.hook = await createHook(this.http, this.project, { name: 'faults', rateLimitPerMinute: 100_000 });
  }

  /** Every run of `project` calls back and enrolls every match, without a rate limit in the way; its flow:trigger token. */
  private async settleProject(project: ProjectFixture): Promise<string> {
    const settings = await this.http.patch(
      `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`,
      { defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 1_000_000, defaultCallbackUrl: `${this.receiver.url}/callback`, defaultCallbackSecret: 'fault-lab-secret' },
      { bearer: project.ownerJwt },
    );
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${JSON.stringify(settings.body)}`);
    return (await issueToken(this.http, project, ['flow:trigger'])).token;
  }

  private async startPostgres(): Promise<void> {
    this.postgres = await startEmbeddedPostgres({ dataDir: path.join(this.workDir, 'pgdata'), port: this.postgresPort, database: 'runline' });
  }

  private async startNats(): Promise<void> {
    this.nats = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(this.natsPort), '-js', '-sd', path.join(this.workDir, 'nats')], { stdio: 'ignore' });
    await eventually('nats-server to listen', async () => {
      const answer = await fetch(`http://127.0.0.1:${this.natsPort}`).catch((error: { cause?: { code?: string } }) => error.cause?.code);
      return answer === 'ECONNREFUSED' ? undefined : true;
    });
  }

  private async startService(service: ServiceName): Promise<void> {
    const port = this.ports.get(service)!;
    const started = runNode(compiledEntry(`services/${service}/main.js`), [], { ...this.environment, PORT: String(port) });
    this.processes.set(service, started);
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, started, 60_000);
  }

  /**
   * Lost or late: where the missing callbacks of these runs stand. No delivery row: the
   * DeliverCallback never reached the callback service (its command is lost, or still in the
   * invocation service's outbox or the queue); a PENDING one: late, with the attempts made.
   */
  private async whereCallbacksStand(invocationIds: string[]): Promise<string> {
    const rows = await this.sql<{ status: string; attempts: number; n: number }>(
      `SELECT status, attempts_made AS attempts, count(*)::int AS n FROM callback.callback_deliveries WHERE invocation_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2`,
      [invocationIds],
    );
    const [outbox] = await this.sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.outbox WHERE published_at IS NULL`);
    const recorded = rows.reduce((sum, row) => sum + row.n, 0);
    const byState = rows.map((row) => `${row.status} after ${row.attempts} attempts x${row.n}`).join(', ') || 'none';
    // What the receiver did to each attempt of those deliveries: a fast refusal and a timeout
    // point at different causes.
    const attempts = await this.sql<{ attempt: number; outcome: string; code: number | null; error: string | null; n: number; ms: number }>(
      `SELECT a.attempt, a.outcome, a.status_code AS code, left(a.error, 160) AS error, count(*)::int AS n, max(a.duration_ms)::int AS ms
         FROM callback.callback_attempts a JOIN callback.callback_deliveries d ON d.id = a.delivery_id
        WHERE d.invocation_id = ANY($1) AND d.status <> 'DELIVERED' GROUP BY 1, 2, 3, 4 ORDER BY 1, 5 DESC`,
      [invocationIds],
    );
    const byAttempt =
      attempts.map((row) => `attempt ${row.attempt}: ${row.outcome}${row.code ? ` ${row.code}` : ''}${row.error ? ` (${row.error})` : ''} x${row.n}, up to ${row.ms} ms`).join('; ') || 'none';
    return (
      `${invocationIds.length - recorded} with no delivery at the callback service (the invocation outbox holds ${outbox?.n ?? 0} unpublished messages); ` +
      `deliveries: ${byState}; attempts of those not delivered: ${byAttempt}`
    );
  }

  private async ready(service: ServiceName): Promise<boolean> {
    const answer = await fetch(`http://127.0.0.1:${this.ports.get(service)}/health/ready`).catch(() => undefined);
    return answer?.status === 200;
  }

  /** Puts the system through `fault` while `runs` async runs (and a mix of others) are in flight. */
  async inject(fault: Fault, runs: number): Promise<FaultOutcome> {
    const phase = ++this.phase;
    const unexpected: Record<string, number> = {};
    const samples: string[] = [];
    const note = (answer: HttpResult<unknown> | undefined) => {
      if (answer && documented(answer, fault)) return;
      // The gateway itself killed: connections are refused, which is what a client sees of a
      // dead process (not an answer of ours). Anything else is counted.
      if (!answer && fault.kind === 'kill' && fault.service === 'gateway') return;
      const status = answer ? String(answer.status) : 'no answer';
      unexpected[status] = (unexpected[status] ?? 0) + 1;
      if (samples.length < 5) samples.push(`${status} ${JSON.stringify(answer?.body ?? null).slice(0, 300)}`);
    };
    const accepted = new Map<string, string>(); // run key → invocationId
    const asyncKeys = new Set<string>();
    const started = Date.now();

    // Polls keep coming through the phase: one new item per poll, each a run of its own.
    const pollKey = `faults-${phase}`;
    const feed = this.endpoint.script(
      `/feed/${pollKey}`,
      Array.from({ length: 10_000 }, (_, poll) => ({ json: [{ id: `${phase}-${poll}`, event: 'e', customerId: 'polled', k: `p-${phase}-${poll}` }] })),
    );
    const trigger = await this.http.post(`${this.flows()}/polling`, { source: pollKey, pollKey, pollEndpoint: feed, intervalMs: 1000 }, { bearer: this.token });
    if (trigger.status !== 201) throw new Error(`polling trigger: ${trigger.status} ${JSON.stringify(trigger.body)}`);

    const send = async (key: string, kind: 'async' | 'self-contained' | 'scheduled' | 'sync' | 'hook'): Promise<void> => {
      const body = { event: 'e', customerId: key, k: key, ...(kind === 'scheduled' ? { delaySeconds: 2 } : {}) };
      const route = kind === 'sync' ? 'trigger' : 'trigger-async';
      const [flows, token] = kind === 'self-contained' ? [this.flows(this.selfContained.project), this.selfContained.token] : [this.flows(), this.token];
      // A refused request is resent with the same key (a delivery with the same delivery id), as
      // the spec tells clients to; a delivery's 409 names the run an earlier attempt started.
      const trySend = async () => {
        const answer =
          kind === 'hook'
            ? await this.deliver(key, body)
            : await this.http
                .post<{ invocationId?: string }>(`${flows}/${route}`, body, { bearer: token, headers: { 'x-idempotency-key': key } })
                .catch(() => undefined);
        note(answer);
        if (answer && (answer.status < 300 || (kind === 'hook' && answer.status === 409)) && answer.body.invocationId) {
          accepted.set(key, answer.body.invocationId);
          if (kind !== 'sync') asyncKeys.add(key);
          return;
        }
        throw new NotAccepted(key);
      };
      await retry(trySend, { maxAttempts: 600, baseDelayMs: 100, factor: 1, retryable: (error) => error instanceof NotAccepted });
    };
    const load = (async () => {
      const inFlight: Promise<void>[] = [];
      for (let n = 0; n < runs; n++) {
        const kind = n % 10 === 9 ? 'sync' : n % 10 === 8 ? 'scheduled' : n % 10 === 7 ? 'hook' : n % 10 === 6 ? 'self-contained' : 'async';
        inFlight.push(send(`r-${phase}-${n}`, kind));
        if (inFlight.length % 50 === 0) await sleep(20);
      }
      await Promise.all(inFlight);
    })();

    // Strike once a quarter of the runs are in.
    await eventually('a quarter of the runs to be accepted', async () => (accepted.size >= runs / 4 ? true : undefined), 60_000);
    const restartedAt = await this.strike(fault);
    const recovered = (async () => {
      for (let probe = 0; ; probe++) {
        const probeBody = { event: 'e', customerId: 'probe', k: `probe-${phase}-${probe}` };
        // The webhook service is back when a delivery is accepted again; the rest, when a run is.
        const answer =
          fault.kind === 'kill' && fault.service === 'webhook'
            ? await this.deliver(`probe-${phase}-${probe}`, probeBody)
            : await this.http.post<{ invocationId?: string }>(`${this.flows()}/trigger-async`, probeBody, { bearer: this.token }).catch(() => undefined);
        note(answer);
        if (answer?.status === 202 && (fault.kind !== 'kill' || (await this.ready(fault.service)))) return Date.now() - restartedAt;
        await sleep(100);
      }
    })();
    const recoveryMs = await recovered;
    await load;
    await this.http.delete(`${this.flows()}/polling?pollKey=${pollKey}`, { bearer: this.token }).catch(() => undefined);

    // Every accepted run ends; then count what happened to each.
    const ids = [...accepted.values()];
    await eventually(
      `the ${ids.length} runs of "${describeFault(fault)}" to end`,
      async () => {
        const rows = await this.sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE id = ANY($1) AND document->>'status' = ANY($2)`, [ids, [...FINAL]]);
        return rows[0]!.n === ids.length ? true : undefined;
      },
      120_000,
    ).catch(() => undefined);
    const views = await this.sql<{ id: string; status: string; error: string | null }>(
      `SELECT id, document->>'status' AS status, document->>'errorMessage' AS error FROM invocation.invocation_views WHERE id = ANY($1)`,
      [ids],
    );
    const status = new Map(views.map((row) => [row.id, row]));
    const lost = ids.filter((id) => !FINAL.has(status.get(id)?.status ?? '')).length;
    const interruptedRows = views.filter((row) => row.status === 'FAILED' && /^Run was interrupted/.test(row.error ?? ''));
    const interrupted = interruptedRows.length;
    if (samples.length > 0 && process.env.FAULT_DEBUG) {
      const failures = this.processes.get('gateway')!.output().split('\n').filter((line) => line.includes('StartInvocation failed') || line.includes('"level":50'));
      console.log(`gateway on the unexpected answers:\n${failures.slice(0, 5).join('\n').slice(0, 4000)}`);
    }
    if (interrupted > 0 && process.env.FAULT_DEBUG) {
      const events = await this.sql(`SELECT invocation_id, sequence, type, occurred_at, data FROM invocation.invocation_events WHERE invocation_id = ANY($1) ORDER BY 1, 2`, [interruptedRows.map((row) => row.id)]);
      console.log(`interrupted runs:\n${JSON.stringify(events, null, 1).slice(0, 4000)}\ninvocation output:\n${this.processes.get('invocation')!.output().slice(-6000)}`);
    }
    const startedTwice = await this.sql<{ id: string }>(
      `SELECT invocation_id AS id FROM invocation.invocation_events WHERE invocation_id = ANY($1) AND type = 'InvocationStarted' GROUP BY 1 HAVING count(*) > 1`,
      [ids],
    );
    const calledTwice = [...accepted.keys()].filter((key) => (this.hits.get(key) ?? 0) > 1);
    const doubled = new Set([...startedTwice.map((row) => row.id), ...calledTwice.map((key) => accepted.get(key)!)]).size;

    // Callbacks: at least one delivery per final async run, counted at the receiver by webhook id.
    const finalAsync = [...asyncKeys].map((key) => accepted.get(key)!).filter((id) => FINAL.has(status.get(id)?.status ?? ''));
    await eventually(
      'a callback for every ended async run',
      async () => (finalAsync.every((id) => this.calledBack().has(id)) ? true : undefined),
      60_000,
    ).catch(() => undefined);
    const called = this.calledBack();
    const missingIds = finalAsync.filter((id) => !called.has(id));
    const callbacksMissing = missingIds.length;
    if (callbacksMissing > 0) console.log(`${describeFault(fault)}: ${callbacksMissing} callbacks missing after 60 s; ${await this.whereCallbacksStand(missingIds)}`);

    // Polls go on while this waits, so only the polled runs made before the wait count: each of
    // them must end.
    const polledBefore = new Date();
    const polledCounts = async () =>
      (
        await this.sql<{ started: number; ended: number }>(
          `SELECT count(*)::int AS started, (count(*) FILTER (WHERE document->>'status' = ANY($4)))::int AS ended
             FROM invocation.invocation_views
            WHERE project_id = $1 AND document->>'triggerSource' = 'POLLING' AND created_at >= $2 AND created_at < $3`,
          [this.project.projectId, new Date(started), polledBefore, [...FINAL]],
        )
      )[0]!;
    await eventually('the polled runs to end', async () => {
      const counts = await polledCounts();
      return counts.ended === counts.started ? true : undefined;
    }, 60_000).catch(() => undefined);
    const polled = await polledCounts();
    return {
      fault: describeFault(fault),
      accepted: accepted.size,
      lost,
      doubled,
      interrupted,
      callbacksMissing,
      unexpectedAnswers: unexpected,
      unexpectedSamples: samples,
      polledStarted: polled.started,
      polledEnded: polled.ended,
      recoveryMs,
    };
  }

  /** Injects the fault, brings the part back, and returns when its restart began. */
  private async strike(fault: Fault): Promise<number> {
    if (fault.kind === 'kill') {
      const running = this.processes.get(fault.service)!;
      running.child.kill('SIGKILL');
      await running.exit();
      const at = Date.now();
      await this.startService(fault.service);
      return at;
    }
    if (fault.kind === 'nats-restart') {
      const running = this.nats!;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
      await sleep(2000);
      const at = Date.now();
      await this.startNats();
      return at;
    }
    await this.database().stop();
    await sleep(2000);
    const at = Date.now();
    await this.startPostgres();
    return at;
  }

  /** A signed delivery to the lab's inbound hook; `key` is its delivery id's seed (one id per key). */
  private deliver(key: string, body: object): Promise<HttpResult<{ invocationId?: string }> | undefined> {
    return deliver(this.http, this.hook.id, this.hook.secret, body, { deliveryId: deliveryIdOf(key) }).catch(() => undefined);
  }

  private flows(project: ProjectFixture = this.project): string {
    return `/v1/orgs/${project.orgId}/flows/${project.projectId}`;
  }

  private calledBack(): Set<string> {
    const ids = new Set<string>();
    const webhookIds = new Set<string>();
    for (const request of this.receiver.at('/callback')) {
      const webhookId = String(request.headers['webhook-id'] ?? '');
      if (webhookIds.has(webhookId)) continue;
      webhookIds.add(webhookId);
      ids.add((JSON.parse(request.raw.toString()) as { invocationId: string }).invocationId);
    }
    return ids;
  }

  private sql<T>(query: string, parameters: unknown[] = []): Promise<T[]> {
    return queryDatabase(this.database().url, query, parameters) as Promise<T[]>;
  }

  private database(): EmbeddedPostgres {
    if (!this.postgres) throw new Error('the lab has no PostgreSQL (boot failed)');
    return this.postgres;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((running) => running.stop()));
    if (this.nats && this.nats.exitCode === null) this.nats.kill('SIGKILL');
    await this.postgres?.stop();
    await this.receiver.close();
    await this.endpoint.close();
    await new Promise((resolve) => this.counter.close(resolve));
    await this.certificate.remove();
    await rm(this.workDir, { recursive: true, force: true });
  }
}

/**
 * The answers a client whose request meets a fault may get: success, 429, 503 (retry), and when
 * the invocation service died in the middle of a request, the unexpected-error 500 the spec
 * documents for a sync run (`Flow sync trigger failed`) or its async twin in the README (`The run
 * could not be started, retry with the same idempotency key`); both say to retry with the same
 * key, and the suite checks that such retries give one run. While PostgreSQL is down every
 * refusal is a 503. A delivery to an inbound hook resent with its delivery id may also get 409
 * `Delivery already received` with the run an earlier attempt started.
 */
const RETRY_WITH_THE_SAME_KEY = new Set(['Flow sync trigger failed', 'The run could not be started, retry with the same idempotency key']);

function documented(answer: HttpResult<unknown>, fault: Fault): boolean {
  if (answer.status < 300 || answer.status === 429 || answer.status === 503) return true;
  const error = (answer.body as { error?: string } | null)?.error;
  // A delivery resent after its first attempt's answer was lost: the run it started.
  if (answer.status === 409 && error === 'Delivery already received') return true;
  // The invocation service killed while it ran a sync run: the run ended interrupted, and a
  // retry with the same key gets the sync failure of that run (500, its invocationId, FAILED).
  if (answer.status === 500 && fault.kind === 'kill' && fault.service === 'invocation' && interruptedSyncRun(answer.body)) return true;
  return answer.status === 500 && error !== undefined && RETRY_WITH_THE_SAME_KEY.has(error) && fault.kind !== 'postgres-restart';
}

/** What a run whose process died ends with (docs/api.md, "Leases"). */
const INTERRUPTED_MESSAGE = 'Run was interrupted: the process running it stopped before it finished';

function interruptedSyncRun(body: unknown): boolean {
  const failure = body as { error?: string; invocationId?: string; status?: string } | null;
  return failure?.status === 'FAILED' && typeof failure.invocationId === 'string' && failure.error === INTERRUPTED_MESSAGE;
}

/** A stable UUID-shaped delivery id per run key, so a resend is the same delivery. */
function deliveryIdOf(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The table the suite prints: one row per fault. */
export function faultTable(outcomes: FaultOutcome[]): string {
  const header = ['fault', 'runs', 'lost', 'doubled', 'interrupted', 'callbacks missing', 'polled (ended/started)', 'unexpected answers', 'recovery'];
  const rows = outcomes.map((outcome) => [
    outcome.fault,
    String(outcome.accepted),
    String(outcome.lost),
    String(outcome.doubled),
    String(outcome.interrupted),
    String(outcome.callbacksMissing),
    `${outcome.polledEnded}/${outcome.polledStarted}`,
    Object.entries(outcome.unexpectedAnswers).map(([status, count]) => `${status} x${count}`).join(', ') || 'none',
    `${(outcome.recoveryMs / 1000).toFixed(1)} s`,
  ]);
  return markdownTable(header, rows);
}

/**
 * The runs' http node target: counts calls per key (`/hit/<key>`), so a lab sees a run made
 * twice. Slow enough (20 ms) that a fault catches runs in the middle of their http node.
 */
export async function startHitCounter(): Promise<{ counter: Server; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const counter = createServer((request, response) => {
    const key = decodeURIComponent(/\/hit\/([^/?]+)/.exec(request.url ?? '')?.[1] ?? '');
    hits.set(key, (hits.get(key) ?? 0) + 1);
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 20);
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  return { counter, hits };
}

/** A header and rows as a Markdown table, one line per row (the suites print their figures so). */
export function markdownTable(header: string[], rows: string[][]): string {
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

