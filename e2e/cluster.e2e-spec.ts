import {
  CALLBACK_LEASE_MS,
  ClusterLab,
  clusterTable,
  describeClusterFault,
  POLLING_LEASE_MS,
  type ClusterFault,
  type ClusterLoad,
  type ClusterOutcome,
} from './support/cluster-lab.js';

/**
 * Beyond one machine (DESIGN.md section 15): a three-node NATS JetStream cluster with R3 streams
 * (BUS_STREAM_REPLICAS=3), two replicas of every service, and in turn the NATS node leading the
 * invocation event stream killed with -9 (restarted on its store after a while), one replica of
 * every service killed with -9, and every replica restarted one at a time (a rollout). Under each,
 * async runs with callbacks (one every 60 ms through the two gateways), scheduled runs, polled
 * items and bursts of bot messages of one session; after each: nothing lost or doubled, each
 * callback once, runs and callbacks within 10 s, few refusals, polls on time and once, bot
 * counters 1..N.
 *
 * Size: `npm run faults` sets CLUSTER_FULL=1 (300 async runs per fault at least, the node down
 * 30 s, bursts of 20 bot messages; about 2.5 minutes on two cores). Otherwise (CI) 150 runs, the
 * node down 10 s, bursts of 10 (1.5 to 3 minutes: a bot message whose request was lost with the
 * killed node is answered at the gateway's 40 s sync deadline).
 * CLUSTER_STREAM_REPLICAS=1 runs it with BUS_STREAM_REPLICAS unset (one replica per stream, as
 * before it existed); CLUSTER_FAULTS=nats-leader,replica-kills,rolling-restart picks faults (one
 * named twice runs twice); CLUSTER_LOG_DIR keeps every process's output, at CLUSTER_LOG_LEVEL.
 */
const FULL = process.env.CLUSTER_FULL === '1';
const LOAD: ClusterLoad = {
  asyncRuns: FULL ? 300 : 150,
  asyncEveryMs: 60,
  scheduledEveryMs: 600,
  scheduleAheadMs: 3_000,
  botBurst: FULL ? 20 : 10,
  pollIntervalMs: 1_000,
};
const DOWN_MS = FULL ? 30_000 : 10_000;
const REPLICAS = process.env.CLUSTER_STREAM_REPLICAS === '1' ? undefined : Number(process.env.CLUSTER_STREAM_REPLICAS ?? 3);
const ALL: ClusterFault[] = [{ kind: 'nats-leader', downMs: DOWN_MS }, { kind: 'replica-kills' }, { kind: 'rolling-restart' }];
const chosen = process.env.CLUSTER_FAULTS?.split(',').map((kind) => kind.trim());
const FAULTS = chosen ? chosen.map((kind) => ALL.find((fault) => fault.kind === kind)).filter((fault) => fault !== undefined) : ALL;
/** At most 10 of 300 accepts refused (503), in proportion. */
const refusalBudget = (accepted: number) => Math.ceil((accepted * 10) / 300);

describe(`a NATS cluster and two replicas of every service, streams R${REPLICAS ?? '1 (BUS_STREAM_REPLICAS unset)'}`, () => {
  let lab: ClusterLab;
  const outcomes: ClusterOutcome[] = [];
  const began = Date.now();

  beforeAll(async () => {
    lab = await ClusterLab.start({ streamReplicas: REPLICAS });
    console.log(`cluster lab up in ${((Date.now() - began) / 1000).toFixed(0)} s; streams:\n${(await lab.streamPlacement()).join('\n')}`);
  }, 300_000);

  afterAll(async () => {
    if (outcomes.length > 0) {
      console.log(
        `cluster suite (${FULL ? 'full' : 'CI'} size: at least ${LOAD.asyncRuns} async runs per fault, one every ${LOAD.asyncEveryMs} ms; ` +
          `streams R${REPLICAS ?? 1}), ${((Date.now() - began) / 1000).toFixed(0)} s in all:\n${clusterTable(outcomes)}\n` +
          `streams afterwards:\n${(await lab.streamPlacement().catch(() => [])).join('\n')}`,
      );
    }
    await lab?.stop();
  }, 120_000);

  it('makes the streams with the replicas asked for, and their consumers follow them', async () => {
    const placement = await lab.streamPlacement();
    expect(placement.length).toBeGreaterThan(0);
    for (const line of placement) expect(line).toMatch(new RegExp(`: R${REPLICAS ?? 1},`));
    const consumers = await lab.consumerReplicas();
    expect(consumers.length).toBeGreaterThan(0);
    expect(new Set(consumers)).toEqual(new Set([REPLICAS ?? 1]));
  });

  it.each(FAULTS.map((fault) => [describeClusterFault(fault), fault] as const))(
    '%s: nothing lost or doubled, each callback once, within 10 s, few refusals, polls once and on time, bot counters 1..N',
    async (_name, fault) => {
      const outcome = await lab.phase(fault, LOAD);
      outcomes.push(outcome);
      console.log(
        `${outcome.fault} (from ${outcome.strike.fromMs} to ${outcome.strike.toMs} ms into the phase):\n${clusterTable([outcome])}\n` +
          `slowest runs:\n${outcome.slowest.join('\n')}` +
          (outcome.unexpectedSamples.length ? `\nother answers, first ones:\n${outcome.unexpectedSamples.join('\n')}` : ''),
      );
      // Every run and callback within 10 s of acceptance, or, for one accepted before NATS had
      // a leader again for every stream and consumer the killed node led, within RECOVERY_MS of
      // that (nats-server's own election takes 4 to 9 s and more: cluster-lab.ts). A replica
      // killed with -9 holds what it claimed until its lease ends (the callback and polling
      // services' takeover rule): a callback it held comes that much later, a poll it held is
      // made that much later.
      const killed = fault.kind === 'replica-kills';
      expect({
        lost: outcome.lost,
        doubled: outcome.doubled,
        callbacksMissing: outcome.callbacksMissing,
        callbacksTwice: outcome.callbacksTwice,
        lateRuns: outcome.runPastDeadlineMs > 0,
        lateCallbacks: outcome.callbackPastDeadlineMs > (killed ? CALLBACK_LEASE_MS + 3_000 - 10_000 : 0),
        scheduledFiredTwice: outcome.scheduledFiredTwice,
        pollsMissed: killed ? outcome.pollMaxGapMs > POLLING_LEASE_MS + 2 * LOAD.pollIntervalMs : outcome.pollsMissed,
        pollsTwice: outcome.pollsTwice,
        polledNotRun: outcome.polledNotRun,
        unexpected: outcome.unexpected,
      }).toEqual({
        lost: 0,
        doubled: 0,
        callbacksMissing: 0,
        callbacksTwice: 0,
        lateRuns: false,
        lateCallbacks: false,
        scheduledFiredTwice: 0,
        pollsMissed: killed ? false : 0,
        pollsTwice: 0,
        polledNotRun: 0,
        unexpected: {},
      });
      expect(outcome.accepted).toBeGreaterThanOrEqual(LOAD.asyncRuns);
      expect(outcome.refused).toBeLessThanOrEqual(refusalBudget(outcome.accepted));
      // Bot messages of one session run one at a time across replicas (the invocation service's
      // session turns): each state seen once, none lost. The detail shows on a failure.
      expect({ botCountersOk: outcome.botCountersOk, detail: outcome.botDetail }).toMatchObject({ botCountersOk: true });
    },
    900_000,
  );
});
