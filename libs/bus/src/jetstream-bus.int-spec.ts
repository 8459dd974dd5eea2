import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { JetStreamBus, natsServers, type Bus } from '@runline/bus';
import { deletePrefixedStreams, testNatsUrl, uniqueBusPrefix } from '@runline/testing';
import { describeBusContract } from '../test/bus.contract.js';

describeBusContract('JetStreamBus', async () => {
  const prefix = uniqueBusPrefix();
  const opened: Bus[] = [];
  return {
    open: async () => {
      const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix, name: 'bus-contract' });
      opened.push(bus);
      return bus;
    },
    dispose: async () => {
      await Promise.all(opened.map((bus) => bus.close()));
      await deletePrefixedStreams(testNatsUrl(), prefix);
    },
  };
});

describe('JetStreamBus specifics', () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
  const waitFor = async (condition: () => boolean, timeoutMs = 10_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('puts the prefix on subjects, streams and durables on the wire', async () => {
    const prefix = uniqueBusPrefix();
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix });
    const nc = await connect({ servers: natsServers(testNatsUrl()) });
    try {
      await bus.ensureStreams([{ name: 'WIRE', subjects: ['wire.>'], retention: 'limits', duplicateWindowSeconds: 30 }]);
      const sub = await bus.subscribe({ stream: 'WIRE', durable: 'reader', filterSubject: 'wire.>' }, async () => {});
      await bus.publish({ id: 'w1', subject: 'wire.x', data: bytes('x') });
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(`${prefix}_WIRE`);
      expect(info.config.subjects).toEqual([`${prefix}.wire.>`]);
      expect(info.config.retention).toBe('limits');
      expect(info.config.storage).toBe('file');
      expect(info.config.duplicate_window).toBe(30_000_000_000);
      expect(info.state.messages).toBe(1);
      const consumer = await jsm.consumers.info(`${prefix}_WIRE`, `${prefix}_reader`);
      expect(consumer.config).toMatchObject({
        ack_policy: 'explicit',
        deliver_policy: 'all',
        filter_subject: `${prefix}.wire.>`,
        max_deliver: 10,
        ack_wait: 30_000_000_000,
      });
      await sub.stop();
    } finally {
      await bus.close();
      await nc.close();
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
  });

  it('updates ack wait and max deliver of an existing durable', async () => {
    const prefix = uniqueBusPrefix();
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix });
    const nc = await connect({ servers: natsServers(testNatsUrl()) });
    try {
      await bus.ensureStreams([{ name: 'UPD', subjects: ['upd.>'], retention: 'limits' }]);
      await (await bus.subscribe({ stream: 'UPD', durable: 'd', filterSubject: 'upd.>' }, async () => {})).stop();
      const sub = await bus.subscribe(
        { stream: 'UPD', durable: 'd', filterSubject: 'upd.>', ackWaitMs: 5_000, maxDeliver: 4 },
        async () => {},
      );
      const consumer = await (await jetstreamManager(nc)).consumers.info(`${prefix}_UPD`, `${prefix}_d`);
      expect(consumer.config).toMatchObject({ ack_wait: 5_000_000_000, max_deliver: 4 });
      await sub.stop();
      await expect(
        bus.subscribe({ stream: 'UPD', durable: 'd', filterSubject: 'upd.other' }, async () => {}),
      ).rejects.toThrow(/cannot change/);
    } finally {
      await bus.close();
      await nc.close();
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
  });

  it('lets replicas ensure the same stream at once, even with different settings', async () => {
    const prefix = uniqueBusPrefix();
    const buses = await Promise.all([1, 2].map(() => JetStreamBus.connect({ url: testNatsUrl(), prefix })));
    try {
      await Promise.all(
        buses.map((bus, i) =>
          bus.ensureStreams([{ name: 'RACE', subjects: ['race.>'], retention: 'workqueue', duplicateWindowSeconds: 10 + i }]),
        ),
      );
      await expect(
        buses[0].ensureStreams([{ name: 'RACE', subjects: ['race.>'], retention: 'limits' }]),
      ).rejects.toThrow(/retention/);
    } finally {
      await Promise.all(buses.map((bus) => bus.close()));
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
  });

  it('creates a durable consumer again when it is deleted under a running subscription, and goes on', async () => {
    const prefix = uniqueBusPrefix();
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix });
    const nc = await connect({ servers: natsServers(testNatsUrl()) });
    const seen = new Set<string>();
    try {
      await bus.ensureStreams([{ name: 'GONE', subjects: ['gone.>'], retention: 'limits' }]);
      const sub = await bus.subscribe({ stream: 'GONE', durable: 'd', filterSubject: 'gone.>' }, async (message) => void seen.add(message.id));
      await bus.publish({ id: 'before', subject: 'gone.x', data: bytes('x') });
      await waitFor(() => seen.has('before'));
      await (await jetstreamManager(nc)).consumers.delete(`${prefix}_GONE`, `${prefix}_d`);
      await bus.publish({ id: 'after', subject: 'gone.x', data: bytes('x') });
      await waitFor(() => seen.has('after'));
      expect((await (await jetstreamManager(nc)).consumers.info(`${prefix}_GONE`, `${prefix}_d`)).config.filter_subject).toBe(`${prefix}.gone.>`);
      await sub.stop();
    } finally {
      await bus.close();
      await nc.close();
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
  });

  it('takes NATS_URL as a comma-separated list: a server that is down is passed over', async () => {
    const prefix = uniqueBusPrefix();
    // Port 1 refuses connections; the client goes on to the next server of the list.
    const bus = await JetStreamBus.connect({ url: `nats://127.0.0.1:1, ${testNatsUrl()}`, prefix });
    try {
      await bus.ensureStreams([{ name: 'LIST', subjects: ['list.>'], retention: 'limits' }]);
      await expect(bus.publish({ id: 'l1', subject: 'list.x', data: bytes('x') })).resolves.toBeUndefined();
    } finally {
      await bus.close();
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
    expect(natsServers(' nats://a:1 ,nats://b:2,')).toEqual(['nats://a:1', 'nats://b:2']);
  });

  it('refuses stream replicas outside 1..5, and names BUS_STREAM_REPLICAS when the server cannot give them', async () => {
    for (const streamReplicas of [0, 6, 1.5]) {
      await expect(JetStreamBus.connect({ url: testNatsUrl(), streamReplicas })).rejects.toThrow(/stream replicas must be an integer from 1 to 5/);
    }
    const prefix = uniqueBusPrefix();
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix, streamReplicas: 3 });
    const nc = await connect({ servers: natsServers(testNatsUrl()) });
    try {
      const jsm = await jetstreamManager(nc);
      const clustered = await bus.ensureStreams([{ name: 'R3', subjects: ['r3.>'], retention: 'limits' }]).then(
        () => true,
        (error: Error) => {
          // The test server is one node: it says so, and the error says which setting asked.
          expect(error.message).toMatch(/stream R3 with 3 replicas \(BUS_STREAM_REPLICAS\): replicas > 1 not supported in non-clustered mode/);
          return false;
        },
      );
      if (clustered) expect((await jsm.streams.info(`${prefix}_R3`)).config.num_replicas).toBe(3);
    } finally {
      await bus.close();
      await nc.close();
      await deletePrefixedStreams(testNatsUrl(), prefix);
    }
  });

  it('ping() resolves while connected and rejects after close', async () => {
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: uniqueBusPrefix() });
    await expect(bus.ping()).resolves.toBeUndefined();
    await bus.close();
    await expect(bus.ping()).rejects.toThrow();
  });
});
