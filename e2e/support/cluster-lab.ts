import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { STREAM_NAMES } from '@runline/contracts';
import { createTestDatabase, HttpClient, queryDatabase, TEST_CONSOLE_JWT_SECRET, TEST_SECRETS_KEY, type HttpResult, type TestDatabase } from '@runline/testing';
import { createProject, issueToken, publishDefinition, type ProjectFixture } from '../gateway-fixtures.js';
import { markdownTable, SERVICES, startHitCounter, type ServiceName } from './fault-lab.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './https-receiver.js';
import { eventually } from './lifecycle-support.js';
import { PollingEndpoint } from './polling-endpoint.js';
import { compiledEntry, freePort, runNode, runProcess, waitForOk, type RunningProcess } from './processes.js';

/**
 * The system beyond one machine (DESIGN.md section 15), on loopback: three nats-server nodes in
 * one JetStream cluster, one PostgreSQL database, two replicas of each of the seven services
 * (each told of all three nodes), a customer's HTTPS callback receiver, a polled endpoint and a
 * counter of each run's http-node calls. `phase` puts it through one fault while runs of every
 * kind are in flight and accounts for each of them.
 */

export type ClusterFault =
  /** kill -9 of the node leading the invocation event stream; restarted on its store after `downMs`. */
  | { kind: 'nats-leader'; downMs: number }
  /** kill -9 of one replica of every service at once; each restarted at once (as a pod is). */
  | { kind: 'replica-kills' }
  /** SIGTERM of every replica, one at a time, each started again and ready before the next (a rollout). */
  | { kind: 'rolling-restart' };

export interface ClusterLoad {
  /** Async runs with callbacks, one every `asyncEveryMs` through the two gateways in turn, at least this many. */
  asyncRuns: number;
  asyncEveryMs: number;
  /** A run scheduled `scheduleAheadMs` ahead, one every `scheduledEveryMs`. */
  scheduledEveryMs: number;
  scheduleAheadMs: number;
  /** Messages of one bot session sent at once, through both gateways; two bursts in a phase. */
  botBurst: number;
  pollIntervalMs: number;
}

/** What one fault did to the load around it. */
export interface ClusterOutcome {
  fault: string;
  /** Async runs accepted (202), and how many of them were refused with 503 at least once first. */
  accepted: number;
  refused: number;
  /** Answers other than 2xx and 503 (a refused connection to a stopped gateway is resent to the other one). */
  unexpected: Record<string, number>;
  /** The first few of them, with their bodies. */
  unexpectedSamples: string[];
  /** Accepted runs (async and scheduled) that never reached a final status. */
  lost: number;
  /** Runs started more than once, or whose http node ran more than once. */
  doubled: number;
  /** Runs that ended "Run was interrupted" (their process died mid-run). */
  interrupted: number;
  callbacksMissing: number;
  /** Runs whose callback arrived more than once. */
  callbacksTwice: number;
  /** From acceptance (a scheduled run: its time) to the run's end, and to its callback's arrival, ms. */
  runMs: { p50: number; max: number };
  callbackMs: { p50: number; max: number };
  /** Runs or callbacks later than 10 s. */
  late: number;
  /**
   * How far the latest run and the latest callback came past their deadline, ms (0 or less: on
   * time). The deadline is 10 s after acceptance; for a run accepted before NATS had a leader
   * again for every stream and consumer the killed node led, at least RECOVERY_MS after that.
   */
  runPastDeadlineMs: number;
  callbackPastDeadlineMs: number;
  /** After a NATS node kill: how long until every stream and consumer had a leader again, ms. */
  leaderlessMs: number | undefined;
  scheduled: number;
  scheduledFiredTwice: number;
  /**
   * Polls made in the phase; due polls skipped (a whole interval past a poll's due time by the
   * polling rule without a poll: an interval after the previous one, or after its end when its
   * item ran longer than that; after a NATS node kill, for a poll made before NATS had its
   * leaders back, no earlier than RECOVERY_MS after that, as for runs); polls made twice (two
   * within half an interval).
   */
  polls: number;
  pollsMissed: number;
  pollsTwice: number;
  /** Items polled that never ran. */
  polledNotRun: number;
  /** The longest time between two polls, ms; the latest a poll came after its due time, ms. */
  pollMaxGapMs: number;
  pollMaxLateMs: number;
  /** Bot messages sent, answered 200, and whether their counters were 1..N (each state seen once). */
  botSent: number;
  botAnswered: number;
  botCountersOk: boolean;
  botDetail: string;
  durationMs: number;
  /** When the fault began and ended, from the phase's start, ms. */
  strike: { fromMs: number; toMs: number };
  /** The slowest runs' histories (event times from acceptance, ms), to say where time went. */
  slowest: string[];
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);
const LATE_MS = 10_000;
/**
 * From the moment NATS has a leader again for every stream and consumer to the moment the work
 * held up behind them is done: two missed pull heartbeats (the bus pulls again) and the run.
 * nats-server elects a new raft leader for each group the killed node led only after an election
 * timeout of 4 to 9 s (server/raft.go, not configurable); measured on 2.9.10 (30 R3 consumers,
 * six kills): 3.5 s at least, p50 5.4 s, p90 8.1 s, max 24.9 s, and one consumer of 104 still
 * without a leader 30 s on. A run accepted just before the kill can only end 10 s after
 * acceptance when its groups' elections are quick: the deadline allows for NATS's part.
 */
const RECOVERY_MS = 3_000;
/** From a polled item's run recorded as ended to the poller holding its reply (and deciding the next due time). */
const POLL_REPLY_ALLOWANCE_MS = 300;
/**
 * A callback replica owns a delivery it claimed this long; one killed with -9 holds its claims
 * until then (the callback service's rule: at least its 10 s acknowledgement window and a second).
 * An attempt starts only while the claim has the window and 0.5 s left, so the lab gives it
 * 2.5 s: with the fault suite's 11 s, a delivery whose insert took over 0.5 s on a busy machine
 * waited out the claim before its first attempt (seen here, 11 s late).
 */
export const CALLBACK_LEASE_MS = 13_000;
/** A polling replica killed with -9 holds the trigger it claimed this long. */
export const POLLING_LEASE_MS = 3_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeClusterFault(fault: ClusterFault): string {
  if (fault.kind === 'nats-leader') return `kill -9 the NATS node leading INVOCATION_EVENTS for ${Math.round(fault.downMs / 1000)} s`;
  return fault.kind === 'replica-kills' ? 'kill -9 one replica of every service' : 'rolling restart of all 14 replicas';
}

/** One nats-server of the cluster, with a config file and a store directory of its own. */
class NatsNode {
  process: RunningProcess | undefined;

  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly clusterPort: number,
    readonly monitorPort: number,
    readonly configFile: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.clientPort}`;
  }

  start(): void {
    this.process = runProcess('/usr/sbin/nats-server', ['-c', this.configFile], { PATH: process.env.PATH });
  }

  /** `/healthz` answers 200 once the node serves and its JetStream is current with the cluster. */
  async healthy(timeoutMs = 60_000): Promise<void> {
    await eventually(
      `NATS node ${this.name} to be healthy`,
      async () => {
        if (this.process?.child.exitCode !== null) throw new Error(`nats-server ${this.name} exited:\n${this.process?.output().slice(-2000)}`);
        const answer = await fetch(`http://127.0.0.1:${this.monitorPort}/healthz`).catch(() => undefined);
        return answer?.status === 200 ? true : undefined;
      },
      timeoutMs,
    );
  }

  async kill(): Promise<void> {
    const running = this.process;
    if (!running) return;
    running.child.kill('SIGKILL');
    await running.exit();
  }
}

interface Replica {
  service: ServiceName;
  index: number;
  port: number;
  process?: RunningProcess;
  /** Output of its earlier processes (before a restart). */
  earlier: string;
}

/** A refusal the client resends (503, or a gateway that is not there). */
class Refused extends Error {}

export class ClusterLab {
  private readonly replicas: Replica[] = [];
  private gateways: HttpClient[] = [];
  private observer!: { nc: NatsConnection; jsm: JetStreamManager };
  /** The last NATS node kill: when, and when every stream and consumer had a leader again. */
  private leadersBack: { killedAt: number; at: number } | undefined;
  private environment!: NodeJS.ProcessEnv;
  private project!: ProjectFixture;
  private token!: string;
  private phaseNumber = 0;
  readonly busPrefix = 'cluster';

  private constructor(
    private readonly workDir: string,
    private readonly nodes: NatsNode[],
    private readonly database: TestDatabase,
    private readonly certificate: TestCertificate,
    private readonly receiver: HttpsReceiver,
    private readonly counter: Server,
    private readonly hits: Map<string, number>,
    private readonly endpoint: PollingEndpoint,
    /** BUS_STREAM_REPLICAS for the services; undefined leaves it unset (one replica). */
    readonly streamReplicas: number | undefined,
  ) {}

  static async start(options: { streamReplicas: number | undefined }): Promise<ClusterLab> {
    const workDir = await mkdtemp(path.join(tmpdir(), 'runline-cluster-'));
    await chmod(workDir, 0o755);
    const { counter, hits } = await startHitCounter();
    const nodes: NatsNode[] = [];
    for (const name of ['n1', 'n2', 'n3']) {
      nodes.push(new NatsNode(name, await freePort(), await freePort(), await freePort(), path.join(workDir, `${name}.conf`)));
    }
    const certificate = await selfSignedCertificate();
    const lab = new ClusterLab(
      workDir,
      nodes,
      await createTestDatabase(),
      certificate,
      await startHttpsReceiver(certificate),
      counter,
      hits,
      await PollingEndpoint.start(),
      options.streamReplicas,
    );
    try {
      await lab.boot();
    } catch (error) {
      await lab.stop();
      throw error;
    }
    return lab;
  }

  private async boot(): Promise<void> {
    for (const node of this.nodes) {
      const routes = this.nodes.filter((other) => other !== node).map((other) => `nats-route://127.0.0.1:${other.clusterPort}`);
      await mkdir(path.join(this.workDir, `${node.name}-store`));
      await writeFile(
        node.configFile,
        [
          `server_name: ${node.name}`,
          `listen: 127.0.0.1:${node.clientPort}`,
          `http: 127.0.0.1:${node.monitorPort}`,
          `jetstream { store_dir: "${path.join(this.workDir, `${node.name}-store`)}" }`,
          `cluster {`,
          `  name: runline-lab`,
          `  listen: 127.0.0.1:${node.clusterPort}`,
          `  routes: [${routes.join(', ')}]`,
          `}`,
          '',
        ].join('\n'),
      );
      node.start();
    }
    await Promise.all(this.nodes.map((node) => node.healthy()));
    const natsUrl = this.nodes.map((node) => node.url).join(',');
    const nc = await connect({ servers: this.nodes.map((node) => node.url), maxReconnectAttempts: -1 });
    this.observer = { nc, jsm: await jetstreamManager(nc) };
    // The meta leader is elected once JetStream answers account requests.
    await eventually('a JetStream meta leader', async () => ((await this.observer.jsm.getAccountInfo().catch(() => undefined)) ? true : undefined), 60_000);

    this.environment = {
      PATH: process.env.PATH,
      DATABASE_URL: this.database.url,
      NATS_URL: natsUrl,
      BUS_PREFIX: this.busPrefix,
      ...(this.streamReplicas === undefined ? {} : { BUS_STREAM_REPLICAS: String(this.streamReplicas) }),
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: process.env.CLUSTER_LOG_LEVEL ?? 'error',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: this.certificate.caFile,
      // Short leases and sweeps, as in the fault suite: work a killed replica held is taken over in seconds.
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '200',
      BUS_ACK_WAIT_MS: '2000',
      CALLBACK_LEASE_MS: String(CALLBACK_LEASE_MS),
      CALLBACK_SWEEP_INTERVAL_MS: '200',
      POLLING_LEASE_MS: String(POLLING_LEASE_MS),
      POLLING_SWEEP_INTERVAL_MS: '200',
      SCHEDULER_SWEEP_INTERVAL_MS: '200',
      DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS: '1000',
    };
    await Promise.all(
      SERVICES.map(async (service) => {
        const migration = runNode(compiledEntry(`services/${service}/main.js`), ['migrate'], this.environment);
        const code = await migration.exit();
        if (code !== 0) throw new Error(`migrating ${service} exited ${code}: ${migration.output()}`);
      }),
    );
    for (const index of [0, 1]) {
      for (const service of SERVICES) this.replicas.push({ service, index, port: await freePort(), earlier: '' });
    }
    // One replica of each service, then the second ones: streams and consumers are made by the first.
    for (const index of [0, 1]) await Promise.all(this.replicas.filter((replica) => replica.index === index).map((replica) => this.startReplica(replica)));
    this.gateways = this.replicas.filter((replica) => replica.service === 'gateway').map((replica) => new HttpClient(`http://127.0.0.1:${replica.port}`));

    const hitUrl = `http://127.0.0.1:${(this.counter.address() as AddressInfo).port}/hit/{{ payload.k }}`;
    this.project = await createProject(this.gateways[0]!, 'CHATBOT');
    await publishDefinition(this.gateways[0]!, this.project, {
      schemaVersion: 1,
      bot: { start: 'end', nodes: { end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'call',
        nodes: { call: { type: 'http', method: 'GET', url: hitUrl, next: 'done' }, done: { type: 'end' } },
      },
    });
    this.token = await this.settle(this.project, ['flow:trigger']);
  }

  /** Every run of `project` calls back, enrolls every match and meets no rate limit; a token with `scopes`. */
  private async settle(project: ProjectFixture, scopes: string[]): Promise<string> {
    const settings = await this.gateways[0]!.patch(
      `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`,
      { defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 1_000_000, defaultCallbackUrl: `${this.receiver.url}/callback`, defaultCallbackSecret: 'cluster-lab-secret' },
      { bearer: project.ownerJwt },
    );
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${JSON.stringify(settings.body)}`);
    const { token } = await issueToken(this.gateways[0]!, project, scopes);
    // Both invocation replicas serve it once its copy is there (it arrives as an event).
    await eventually(
      'the project to reach the invocation service',
      async () => {
        const rows = await this.sql<{ v: number }>('SELECT published_version AS v FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
        return (rows[0]?.v ?? 0) >= 1 ? true : undefined;
      },
      30_000,
    );
    return token;
  }

  /** A chatbot whose bot counts its session's messages: read the count, call out (20 ms), write it back, say it. */
  private async countingBot(): Promise<{ project: ProjectFixture; token: string }> {
    const counterUrl = `http://127.0.0.1:${(this.counter.address() as AddressInfo).port}/hit/bot`;
    const project = await createProject(this.gateways[0]!, 'CHATBOT');
    await publishDefinition(this.gateways[0]!, project, {
      schemaVersion: 1,
      bot: {
        start: 'count',
        nodes: {
          count: { type: 'set', values: { count: '$exists(vars.count) ? vars.count + 1 : 1' }, next: 'call' },
          call: { type: 'http', method: 'GET', url: counterUrl, next: 'say' },
          say: { type: 'message', text: '{{ vars.count }}', next: 'end' },
          end: { type: 'end' },
        },
      },
      flow: { trigger: { externalEnabled: true, key: 'external_event' }, start: 'end', nodes: { end: { type: 'end' } } },
    });
    return { project, token: await this.settle(project, ['bot:invoke']) };
  }

  private async startReplica(replica: Replica): Promise<void> {
    if (replica.process) replica.earlier += `${replica.process.output()}--- restarted at ${new Date().toISOString()}\n`;
    replica.process = runNode(compiledEntry(`services/${replica.service}/main.js`), [], { ...this.environment, PORT: String(replica.port) });
    await waitForOk(`http://127.0.0.1:${replica.port}/health/ready`, replica.process, 120_000);
  }

  /** Each stream's replicas and leader, as the cluster reports them (one line per stream). */
  async streamPlacement(): Promise<string[]> {
    const lines: string[] = [];
    for (const name of Object.values(STREAM_NAMES)) {
      const info = await this.observer.jsm.streams.info(`${this.busPrefix}_${name}`).catch(() => undefined);
      if (!info) continue;
      const followers = (info.cluster?.replicas ?? []).map((peer) => `${peer.name}${peer.current ? '' : ' (behind)'}`);
      lines.push(`${name}: R${info.config.num_replicas}, leader ${info.cluster?.leader ?? '?'}${followers.length ? `, followers ${followers.join(', ')}` : ''}`);
    }
    return lines;
  }

  /** The consumers' replica counts on the invocation event stream (they follow the stream's). */
  async consumerReplicas(): Promise<number[]> {
    const counts: number[] = [];
    for await (const consumer of this.observer.jsm.consumers.list(`${this.busPrefix}_${STREAM_NAMES.INVOCATION_EVENTS}`)) {
      counts.push(1 + (consumer.cluster?.replicas?.length ?? 0));
    }
    return counts;
  }

  /**
   * When every stream and consumer of the system has a leader again (after `killed` died): asked
   * with a short timeout, since a group without a leader leaves the request unanswered.
   */
  private async leadersBackWithout(killed: string): Promise<number> {
    // No account check on creation: it is a request that may go unanswered too.
    const quick = await jetstreamManager(this.observer.nc, { timeout: 500, checkAPI: false });
    const led = (cluster: { leader?: string } | undefined) => cluster?.leader !== undefined && cluster.leader !== '' && cluster.leader !== killed;
    for (const giveUpAt = Date.now() + 180_000; Date.now() < giveUpAt; ) {
      const checks = await Promise.all(
        Object.values(STREAM_NAMES).map(async (name) => {
          const stream = `${this.busPrefix}_${name}`;
          const info = await quick.streams.info(stream).catch(() => undefined);
          if (!info || !led(info.cluster)) return false;
          const consumers: string[] = [];
          for await (const consumer of quick.consumers.list(stream)) consumers.push(consumer.name);
          const infos = await Promise.all(consumers.map((consumer) => quick.consumers.info(stream, consumer).catch(() => undefined)));
          return infos.every((consumer) => consumer !== undefined && led(consumer.cluster));
        }),
      ).catch(() => [false]);
      if (checks.every(Boolean)) return Date.now();
      await sleep(100);
    }
    throw new Error(`NATS had no leader for some stream or consumer 180 s after ${killed} was killed`);
  }

  /** Puts the system through `fault` while the load runs, and accounts for every run made around it. */
  async phase(fault: ClusterFault, load: ClusterLoad): Promise<ClusterOutcome> {
    const phase = ++this.phaseNumber;
    const started = Date.now();
    const unexpected: Record<string, number> = {};
    const unexpectedSamples: string[] = [];
    const note = (status: string, body?: unknown) => {
      unexpected[status] = (unexpected[status] ?? 0) + 1;
      if (unexpectedSamples.length < 5) unexpectedSamples.push(`${status} ${JSON.stringify(body ?? null).slice(0, 300)}`);
    };
    const bot = await this.countingBot();

    // Polls through the phase: a new item on each poll, each a run of its own.
    const pollKey = `cluster-${phase}`;
    const feedPath = `/feed/${pollKey}`;
    const feed = this.endpoint.script(
      feedPath,
      Array.from({ length: 20_000 }, (_, poll) => ({ json: [{ id: `${phase}-${poll}`, event: 'e', customerId: 'polled', k: `p-${phase}-${poll + 1}` }] })),
    );
    const trigger = await this.gateways[0]!.post(`${this.flows()}/polling`, { source: pollKey, pollKey, pollEndpoint: feed, intervalMs: load.pollIntervalMs }, { bearer: this.token });
    if (trigger.status !== 201) throw new Error(`polling trigger: ${trigger.status} ${JSON.stringify(trigger.body)}`);
    const pollsFrom = Date.now();

    // Async and scheduled runs: each key resent (same idempotency key, the other gateway) until accepted.
    interface Accepted {
      id: string;
      /** When the 202 arrived; for a scheduled run, its time. */
      dueAt: number;
      scheduled: boolean;
    }
    const accepted = new Map<string, Accepted>();
    const refusedKeys = new Set<string>();
    let turn = 0;
    const send = async (key: string, scheduled: boolean): Promise<void> => {
      // An attempt whose answer was lost (its gateway died) may have been accepted: the run's
      // clock starts then (a scheduled run's: the time that attempt asked for). A resend of an
      // accepted key answers 202 again, or 200 with the result once the run has ended (an
      // idempotent replay). A resend asks for a time still in the future, as a client must
      // (the same time again is refused once it passed: 400 runAt must be in the future).
      let unansweredSince: number | undefined;
      let unansweredRunAt: number | undefined;
      for (let attempt = 0; attempt < 1200; attempt++) {
        const gateway = this.gateways[turn++ % 2]!;
        const sentAt = Date.now();
        const runAt = scheduled ? sentAt + load.scheduleAheadMs : undefined;
        const body = { event: 'e', customerId: key, k: key, ...(runAt === undefined ? {} : { runAt: new Date(runAt).toISOString() }) };
        const answer: HttpResult<{ invocationId?: string }> | undefined = await gateway
          .post<{ invocationId?: string }>(`${this.flows()}/trigger-async`, body, { bearer: this.token, headers: { 'x-idempotency-key': key } })
          .catch(() => undefined);
        if (answer && (answer.status === 202 || answer.status === 200) && answer.body.invocationId) {
          const dueAt = runAt === undefined ? (unansweredSince ?? Date.now()) : (unansweredRunAt ?? runAt);
          accepted.set(key, { id: answer.body.invocationId, dueAt, scheduled });
          return;
        }
        if (!answer) {
          unansweredSince ??= sentAt;
          unansweredRunAt ??= runAt;
        }
        if (answer?.status === 503) refusedKeys.add(key);
        else if (answer) note(String(answer.status), answer.body);
        await sleep(100);
      }
      throw new Refused(`run ${key} was never accepted`);
    };
    let loadOn = true;
    const sends: Promise<void>[] = [];
    let asyncSent = 0;
    const asyncLoad = (async () => {
      for (let n = 0; loadOn || n < load.asyncRuns; n++) {
        sends.push(send(`a-${phase}-${n}`, false));
        asyncSent++;
        await sleep(load.asyncEveryMs);
      }
    })();
    const scheduledLoad = (async () => {
      for (let n = 0; loadOn; n++) {
        sends.push(send(`s-${phase}-${n}`, true));
        await sleep(load.scheduledEveryMs);
      }
    })();

    // Bot bursts: every message of the burst at once, through both gateways.
    const botAnswers: Array<{ status: number; count?: number; error?: string; ms: number }> = [];
    const botBurst = () =>
      Promise.all(
        Array.from({ length: load.botBurst }, async (_, index) => {
          const sentAt = Date.now();
          const answer = await this.gateways[index % 2]!
            .post<{ result?: { messages?: string[] } }>(`/v1/orgs/${bot.project.orgId}/bots/${bot.project.projectId}/message`, { message: 'one more', sessionId: `phase-${phase}` }, { bearer: bot.token })
            .catch(() => undefined);
          const count = answer?.status === 200 ? Number(answer.body.result?.messages?.[0]) : undefined;
          botAnswers.push({ status: answer?.status ?? 0, count, error: (answer?.body as { error?: string } | undefined)?.error, ms: Date.now() - sentAt });
          // A sync run whose request or reply was lost is answered 500 "Flow sync trigger failed"
          // at its deadline (the spec's unexpected-error answer, which the fault suite counts as
          // documented when a process is killed): its invocation replica died under it, or the
          // NATS node the request was passing through did (core request/reply is at most once).
          // Its outcome is unknown to the client, which the counter check allows for.
          const documentedFailure =
            answer?.status === 500 && (answer.body as { error?: string }).error === 'Flow sync trigger failed' && fault.kind !== 'rolling-restart';
          if (answer && answer.status !== 200 && answer.status !== 503 && !documentedFailure) note(`bot ${answer.status}`, answer.body);
        }),
      );

    await eventually('a quarter of the async runs to be accepted', async () => (accepted.size >= load.asyncRuns / 4 ? true : undefined), 120_000);
    const bursts = [botBurst()];
    const midBurst = setTimeout(() => bursts.push(botBurst()), 8_000);
    const strikeFrom = Date.now() - started;
    try {
      await this.strike(fault);
    } catch (error) {
      // The load would otherwise go on for good, and keep the test process alive.
      loadOn = false;
      clearTimeout(midBurst);
      throw error;
    }
    const strikeTo = Date.now() - started;
    clearTimeout(midBurst);
    if (bursts.length < 2) bursts.push(botBurst());
    // Load goes on a little after the fault, and until the async runs asked for have been sent.
    await sleep(2_000);
    await eventually('the async load to be sent', async () => (asyncSent >= load.asyncRuns ? true : undefined), 600_000);
    loadOn = false;
    await Promise.all([asyncLoad, scheduledLoad]);
    const sent = await Promise.allSettled(sends);
    for (const result of sent) if (result.status === 'rejected') note('never accepted');
    await Promise.all(bursts);
    await this.gateways[0]!.delete(`${this.flows()}/polling?pollKey=${pollKey}`, { bearer: this.token }).catch(() => undefined);
    const pollsUntil = Date.now();

    // Every accepted run ends; then each is accounted for.
    const runs = [...accepted.entries()];
    const ids = runs.map(([, run]) => run.id);
    await eventually(
      `the ${ids.length} runs to end`,
      async () => {
        const rows = await this.sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE id = ANY($1) AND document->>'status' = ANY($2)`, [ids, [...FINAL]]);
        return rows[0]!.n === ids.length ? true : undefined;
      },
      120_000,
    ).catch(() => undefined);
    const views = await this.sql<{ id: string; status: string; error: string | null; completed: string | null }>(
      `SELECT id, document->>'status' AS status, document->>'errorMessage' AS error, document->>'completedAt' AS completed FROM invocation.invocation_views WHERE id = ANY($1)`,
      [ids],
    );
    const view = new Map(views.map((row) => [row.id, row]));
    const finalIds = ids.filter((id) => FINAL.has(view.get(id)?.status ?? ''));
    await eventually('a callback for every ended run', async () => (finalIds.every((id) => this.callbacks().has(id)) ? true : undefined), 60_000).catch(() => undefined);
    const callbacks = this.callbacks();

    const startedTwice = await this.sql<{ id: string }>(
      `SELECT invocation_id AS id FROM invocation.invocation_events WHERE invocation_id = ANY($1) AND type = 'InvocationStarted' GROUP BY 1 HAVING count(*) > 1`,
      [ids],
    );
    const calledTwice = runs.filter(([key]) => (this.hits.get(key) ?? 0) > 1).map(([, run]) => run.id);
    const scheduledIds = runs.filter(([, run]) => run.scheduled).map(([, run]) => run.id);
    const firedTwice = await this.sql<{ id: string }>(
      `SELECT run.id FROM scheduler.outbox AS outbox JOIN unnest($1::text[]) AS run(id) ON position(convert_to(run.id, 'UTF8') IN outbox.data) > 0
        WHERE outbox.subject LIKE '%scheduled-job-fired' GROUP BY run.id HAVING count(*) > 1`,
      [scheduledIds],
    );

    const runMs: number[] = [];
    const callbackMs: number[] = [];
    let late = 0;
    let runPastDeadlineMs = -Infinity;
    let callbackPastDeadlineMs = -Infinity;
    const leadersBack = this.leadersBack && this.leadersBack.killedAt >= started ? this.leadersBack : undefined;
    const deadlineOf = (acceptedAt: number) =>
      Math.max(acceptedAt + LATE_MS, leadersBack && acceptedAt <= leadersBack.at ? leadersBack.at + RECOVERY_MS : -Infinity);
    for (const [, run] of runs) {
      const completed = view.get(run.id)?.completed;
      if (completed) runMs.push(Date.parse(completed) - run.dueAt);
      const arrivals = callbacks.get(run.id);
      if (arrivals) callbackMs.push(arrivals[0]! - run.dueAt);
      if ((completed && Date.parse(completed) - run.dueAt > LATE_MS) || (arrivals && arrivals[0]! - run.dueAt > LATE_MS)) late++;
      if (completed) runPastDeadlineMs = Math.max(runPastDeadlineMs, Date.parse(completed) - deadlineOf(run.dueAt));
      if (arrivals) callbackPastDeadlineMs = Math.max(callbackPastDeadlineMs, arrivals[0]! - deadlineOf(run.dueAt));
    }

    const slowestRuns = runs
      .map(([key, run]) => ({ key, run, ms: Math.max((callbacks.get(run.id)?.[0] ?? Infinity) - run.dueAt, Date.parse(view.get(run.id)?.completed ?? '') - run.dueAt || Infinity) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5);
    const histories = await this.sql<{ id: string; type: string; at: Date }>(
      `SELECT invocation_id AS id, type, occurred_at AS at FROM invocation.invocation_events WHERE invocation_id = ANY($1) ORDER BY invocation_id, sequence`,
      [slowestRuns.map((slow) => slow.run.id)],
    );
    // Where a callback's time went: its DeliverCallback command in the invocation outbox, the
    // callback service's delivery row, its attempts.
    const commands = await this.sql<{ id: string; created: Date; published: Date | null; attempts: number }>(
      `SELECT run.id, outbox.created_at AS created, outbox.published_at AS published, outbox.attempts
         FROM invocation.outbox AS outbox JOIN unnest($1::text[]) AS run(id) ON position(convert_to(run.id, 'UTF8') IN outbox.data) > 0
        WHERE outbox.subject LIKE '%deliver-callback'`,
      [slowestRuns.map((slow) => slow.run.id)],
    );
    const deliveries = await this.sql<{ id: string; created: Date; attempts: Date[] }>(
      `SELECT d.invocation_id AS id, d.created_at AS created, array_agg(a.attempted_at ORDER BY a.attempt) AS attempts
         FROM callback.callback_deliveries d LEFT JOIN callback.callback_attempts a ON a.delivery_id = d.id
        WHERE d.invocation_id = ANY($1) GROUP BY 1, 2`,
      [slowestRuns.map((slow) => slow.run.id)],
    );
    const slowest = slowestRuns.map(({ key, run, ms }) => {
      const at = (date: Date | null | undefined) => (date ? `+${date.getTime() - run.dueAt}` : 'never');
      const steps = histories.filter((row) => row.id === run.id).map((row) => `${row.type} ${at(row.at)}`);
      const command = commands.find((row) => row.id === run.id);
      const delivery = deliveries.find((row) => row.id === run.id);
      const callback = callbacks.get(run.id)?.[0];
      return (
        `${key} (accepted at ${run.dueAt - started} ms into the phase, ${Math.round(ms)} ms): ${steps.join(', ')}` +
        (command ? `; DeliverCallback written ${at(command.created)}, published ${at(command.published)} after ${command.attempts} failed tries` : '') +
        (delivery ? `; delivery row ${at(delivery.created)}, attempts ${delivery.attempts.filter(Boolean).map((date) => at(date)).join(' ')}` : '') +
        (callback ? `; callback arrived +${Math.round(callback - run.dueAt)}` : '; no callback')
      );
    });

    // Polls: the calls the feed got while its trigger existed, and what became of each item.
    const pollTimes = this.endpoint.callsTo(feedPath).map((call) => call.at).filter((at) => at >= pollsFrom && at <= pollsUntil);
    // A poll ends when its item's run has ended (one item a poll); the next is due an interval
    // after the poll, or after its end when it ended past that (the polling service's rule).
    const itemRunEnds = await this.sql<{ completed: string }>(
      `SELECT document->>'completedAt' AS completed FROM invocation.invocation_views
        WHERE project_id = $1 AND document->>'triggerSource' = 'POLLING' AND document->>'completedAt' IS NOT NULL`,
      [this.project.projectId],
    );
    const ends = itemRunEnds.map((row) => Date.parse(row.completed)).sort((a, b) => a - b);
    const pollEnd = (from: number, until: number) => ends.filter((end) => end >= from && end < until).at(-1) ?? from;
    let pollsMissed = 0;
    let pollsTwice = 0;
    let pollMaxLateMs = 0;
    for (let n = 1; n < pollTimes.length; n++) {
      const previous = pollTimes[n - 1]!;
      const gap = pollTimes[n]! - previous;
      // The poller learns its item's end with the run's reply, a moment after the run recorded it.
      const ranFor = pollEnd(previous, pollTimes[n]!) + POLL_REPLY_ALLOWANCE_MS - previous;
      const byRule = previous + load.pollIntervalMs + (ranFor > load.pollIntervalMs ? ranFor : 0);
      // A poll made before NATS had its leaders back may wait on them (its item's start request
      // or reply through the killed node, the item's events): the runs' deadline rule holds here too.
      const due = leadersBack && previous <= leadersBack.at ? Math.max(byRule, leadersBack.at + RECOVERY_MS) : byRule;
      if (gap < load.pollIntervalMs / 2) pollsTwice++;
      // Missed: a whole interval went by after the due time without a poll.
      else pollsMissed += Math.max(0, Math.floor((pollTimes[n]! - due) / load.pollIntervalMs));
      pollMaxLateMs = Math.max(pollMaxLateMs, pollTimes[n]! - due);
    }
    const servedItems = this.endpoint.callsTo(feedPath).length;
    await eventually(
      'every polled item to run',
      async () => (Array.from({ length: servedItems }, (_, n) => this.hits.get(`p-${phase}-${n + 1}`) ?? 0).every((count) => count > 0) ? true : undefined),
      30_000,
    ).catch(() => undefined);
    const polledHits = Array.from({ length: servedItems }, (_, n) => this.hits.get(`p-${phase}-${n + 1}`) ?? 0);

    // Bots: each answered message saw a state no other saw; the next message counts every run.
    const [{ succeeded }] = await this.sql<{ succeeded: number }>(
      `SELECT count(*)::int AS succeeded FROM invocation.invocation_views WHERE project_id = $1 AND target_type = 'BOT' AND document->>'status' = 'SUCCEEDED'`,
      [bot.project.projectId],
    );
    const next = await this.gateways[1]!.post<{ result?: { messages?: string[] } }>(
      `/v1/orgs/${bot.project.orgId}/bots/${bot.project.projectId}/message`,
      { message: 'one more', sessionId: `phase-${phase}` },
      { bearer: bot.token },
    );
    const nextCount = next.status === 200 ? Number(next.body.result?.messages?.[0]) : undefined;
    const counts = botAnswers.filter((answer) => answer.count !== undefined).map((answer) => answer.count!).sort((a, b) => a - b);
    const distinct = new Set(counts).size === counts.length;
    const botCountersOk = distinct && counts.every((count) => count >= 1 && count <= succeeded!) && nextCount === succeeded! + 1;
    const botStatuses = new Map<number, number>();
    for (const answer of botAnswers) botStatuses.set(answer.status, (botStatuses.get(answer.status) ?? 0) + 1);
    const refusedBots = [...botStatuses]
      .filter(([status]) => status !== 200)
      .map(([status, count]) => {
        const answers = botAnswers.filter((answer) => answer.status === status);
        const after = `after ${seconds(Math.min(...answers.map((answer) => answer.ms)))} to ${seconds(Math.max(...answers.map((answer) => answer.ms)))}`;
        return `${status || 'no answer'} x${count}${status ? ` "${answers[0]?.error ?? ''}"` : ''} ${after}`;
      });
    const botDetail =
      `answered ${counts.length}/${botAnswers.length}${refusedBots.length ? ` (${refusedBots.join(', ')})` : ''}, counts ${compactRanges(counts)}, ` +
      `${succeeded} runs succeeded, next message counted ${nextCount ?? next.status}`;

    return {
      fault: describeClusterFault(fault),
      accepted: runs.filter(([, run]) => !run.scheduled).length,
      refused: [...refusedKeys].filter((key) => key.startsWith('a-')).length,
      unexpected,
      unexpectedSamples,
      lost: ids.length - finalIds.length,
      doubled: new Set([...startedTwice.map((row) => row.id), ...calledTwice]).size,
      interrupted: views.filter((row) => row.status === 'FAILED' && /^Run was interrupted/.test(row.error ?? '')).length,
      callbacksMissing: finalIds.filter((id) => !callbacks.has(id)).length,
      callbacksTwice: ids.filter((id) => (callbacks.get(id)?.length ?? 0) > 1).length,
      runMs: percentiles(runMs),
      callbackMs: percentiles(callbackMs),
      late,
      runPastDeadlineMs,
      callbackPastDeadlineMs,
      leaderlessMs: leadersBack ? leadersBack.at - leadersBack.killedAt : undefined,
      scheduled: scheduledIds.length,
      scheduledFiredTwice: firedTwice.length,
      polls: pollTimes.length,
      pollsMissed,
      pollsTwice,
      polledNotRun: polledHits.filter((count) => count === 0).length,
      pollMaxGapMs: Math.max(0, ...pollTimes.slice(1).map((at, n) => at - pollTimes[n]!)),
      pollMaxLateMs,
      botSent: botAnswers.length,
      botAnswered: counts.length,
      botCountersOk,
      botDetail,
      durationMs: Date.now() - started,
      strike: { fromMs: strikeFrom, toMs: strikeTo },
      slowest,
    };
  }

  /** Injects the fault and returns once everything it touched is back (ready, healthy). */
  private async strike(fault: ClusterFault): Promise<void> {
    if (fault.kind === 'nats-leader') {
      const info = await this.observer.jsm.streams.info(`${this.busPrefix}_${STREAM_NAMES.INVOCATION_EVENTS}`);
      const leader = this.nodes.find((node) => node.name === info.cluster?.leader);
      if (!leader) throw new Error(`no leader for INVOCATION_EVENTS: ${JSON.stringify(info.cluster)}`);
      await leader.kill();
      const killedAt = Date.now();
      const leadersBack = this.leadersBackWithout(leader.name).then((at) => (this.leadersBack = { killedAt, at }));
      await sleep(fault.downMs);
      // Restarted on its store, as a StatefulSet pod with its volume is.
      leader.start();
      await leader.healthy(120_000);
      await leadersBack;
      return;
    }
    if (fault.kind === 'replica-kills') {
      const victims = this.replicas.filter((replica) => replica.index === 0);
      await Promise.all(
        victims.map(async (replica) => {
          replica.process!.child.kill('SIGKILL');
          await replica.process!.exit();
        }),
      );
      await Promise.all(victims.map((replica) => this.startReplica(replica)));
      return;
    }
    for (const replica of this.replicas) {
      const code = await replica.process!.stop(30_000);
      if (code !== 0) throw new Error(`${replica.service} replica ${replica.index} exited ${code} on SIGTERM:\n${replica.process!.output().slice(-3000)}`);
      await this.startReplica(replica);
    }
  }

  /** Arrival times of each run's callbacks at the receiver, by invocation id (each delivery counted once by its webhook-id). */
  private callbacks(): Map<string, number[]> {
    const byRun = new Map<string, number[]>();
    const seen = new Set<string>();
    for (const request of this.receiver.at('/callback')) {
      const webhookId = String(request.headers['webhook-id'] ?? '');
      if (seen.has(webhookId)) continue;
      seen.add(webhookId);
      const id = (JSON.parse(request.raw.toString()) as { invocationId: string }).invocationId;
      byRun.set(id, [...(byRun.get(id) ?? []), request.at]);
    }
    return byRun;
  }

  private flows(): string {
    return `/v1/orgs/${this.project.orgId}/flows/${this.project.projectId}`;
  }

  private sql<T>(query: string, parameters: unknown[] = []): Promise<T[]> {
    return queryDatabase(this.database.url, query, parameters) as Promise<T[]>;
  }

  /** The output of every replica of `service` (for a failure's report). */
  output(service: ServiceName): string {
    return this.replicas
      .filter((replica) => replica.service === service)
      .map((replica) => `--- ${service} ${replica.index}\n${replica.process?.output().slice(-4000) ?? ''}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.process?.stop()));
    // CLUSTER_LOG_DIR keeps every process's output (LOG_LEVEL from CLUSTER_LOG_LEVEL, default error).
    const logDir = process.env.CLUSTER_LOG_DIR;
    if (logDir) {
      await mkdir(logDir, { recursive: true });
      for (const replica of this.replicas) await writeFile(path.join(logDir, `${replica.service}-${replica.index}.log`), replica.earlier + (replica.process?.output() ?? ''));
      for (const node of this.nodes) await writeFile(path.join(logDir, `nats-${node.name}.log`), node.process?.output() ?? '');
    }
    await this.observer?.nc.close().catch(() => undefined);
    await Promise.all(this.nodes.map((node) => node.kill()));
    await this.receiver.close();
    await this.endpoint.close();
    await new Promise((resolve) => this.counter.close(resolve));
    await this.certificate.remove();
    await this.database.drop().catch(() => undefined);
    await rm(this.workDir, { recursive: true, force: true });
  }
}

function percentiles(values: number[]): { p50: number; max: number } {
  if (values.length === 0) return { p50: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted[sorted.length - 1]! };
}

/** `1..20` for a run of consecutive numbers, `1..3, 5, 7..9` otherwise. */
function compactRanges(sorted: number[]): string {
  const parts: string[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end]! + 1) end++;
    parts.push(end === start ? String(sorted[start]) : `${sorted[start]}..${sorted[end]}`);
    start = end + 1;
  }
  return parts.join(', ') || 'none';
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The table the cluster suite prints: one row per fault. */
const pastDeadline = (ms: number) => (ms > 0 ? seconds(ms) : 'none');

export function clusterTable(outcomes: ClusterOutcome[]): string {
  const header = [
    'fault',
    'async runs',
    'refused 503',
    'lost',
    'doubled',
    'callbacks missing / twice',
    'run p50 / max',
    'callback p50 / max',
    'late > 10 s (NATS without leaders)',
    'past deadline: runs / callbacks',
    'scheduled (fired twice)',
    'polls (missed / twice / items not run; longest gap, latest)',
    'bot counters',
    'other answers',
    'phase',
  ];
  const rows = outcomes.map((outcome) => [
    outcome.fault,
    String(outcome.accepted),
    String(outcome.refused),
    String(outcome.lost),
    String(outcome.doubled),
    `${outcome.callbacksMissing} / ${outcome.callbacksTwice}`,
    `${seconds(outcome.runMs.p50)} / ${seconds(outcome.runMs.max)}`,
    `${seconds(outcome.callbackMs.p50)} / ${seconds(outcome.callbackMs.max)}`,
    `${outcome.late}${outcome.leaderlessMs === undefined ? '' : ` (${seconds(outcome.leaderlessMs)})`}`,
    `${pastDeadline(outcome.runPastDeadlineMs)} / ${pastDeadline(outcome.callbackPastDeadlineMs)}`,
    `${outcome.scheduled} (${outcome.scheduledFiredTwice})`,
    `${outcome.polls} (${outcome.pollsMissed} / ${outcome.pollsTwice} / ${outcome.polledNotRun}; ${seconds(outcome.pollMaxGapMs)}, ${seconds(outcome.pollMaxLateMs)})`,
    `${outcome.botCountersOk ? 'ok' : 'WRONG'}: ${outcome.botDetail}`,
    Object.entries(outcome.unexpected).map(([status, count]) => `${status} x${count}`).join(', ') || 'none',
    seconds(outcome.durationMs),
  ]);
  return markdownTable(header, rows);
}
