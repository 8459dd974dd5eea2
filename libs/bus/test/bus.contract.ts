import {
  BusNoRespondersError,
  BusRemoteError,
  BusTimeoutError,
  type Bus,
  type DeliveredMessage,
  type DurableSubscriptionSpec,
  type MessageHandler,
  type StreamSpec,
  type Subscription,
} from '@runline/bus';

/**
 * One test suite for every `Bus` implementation, so embedded mode and NATS mode cannot drift
 * apart. Each test gets a fresh fixture: its own streams, subjects and durables.
 */
export interface BusContractFixture {
  /**
   * A bus on the fixture's transport and name space. Called twice in a test, it stands for two
   * replicas: separate connections for NATS, the same instance in one process.
   */
  open(): Promise<Bus>;
  /** Closes every bus `open` returned (some may already be closed) and removes what the test created. */
  dispose(): Promise<void>;
}

const EVENTS: StreamSpec = { name: 'CONTRACT_EVENTS', subjects: ['contract.evt.>'], retention: 'limits' };
const COMMANDS: StreamSpec = {
  name: 'CONTRACT_COMMANDS',
  subjects: ['contract.cmd.>'],
  retention: 'workqueue',
  duplicateWindowSeconds: 60,
};
/** Short, so expiry tests stay fast; handlers in other tests finish well within it. */
const ACK_WAIT_MS = 400;
/** The body of the message `ackWaitPassed` publishes. */
const SENTINEL = 'ack wait sentinel';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (text: string): Uint8Array => encoder.encode(text);
const text = (data: Uint8Array): string => decoder.decode(data);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
const nextId = (): string => `m-${process.pid}-${Date.now()}-${++counter}`;

interface Seen {
  id: string;
  subject: string;
  text: string;
  deliveryCount: number;
  headers: Record<string, string>;
  at: number;
  by: string;
}

/** Records deliveries and waits for conditions on them. */
class Recorder {
  readonly seen: Seen[] = [];

  record(message: DeliveredMessage, by = 'a'): void {
    this.seen.push({
      id: message.id,
      subject: message.subject,
      text: text(message.data),
      deliveryCount: message.deliveryCount,
      headers: { ...message.headers },
      at: performance.now(),
      by,
    });
  }

  of(id: string): Seen[] {
    return this.seen.filter((seen) => seen.id === id);
  }

  async until(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition()) {
      if (performance.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; seen: ${JSON.stringify(this.seen.map((s) => [s.id, s.deliveryCount]))}`);
      }
      await sleep(10);
    }
  }
}

export function describeBusContract(name: string, factory: () => Promise<BusContractFixture>): void {
  describe(`Bus contract: ${name}`, () => {
    let fixture: BusContractFixture;
    let bus: Bus;
    let subscriptions: Subscription[];
    let recorder: Recorder;

    beforeEach(async () => {
      fixture = await factory();
      bus = await fixture.open();
      await bus.ensureStreams([EVENTS, COMMANDS]);
      subscriptions = [];
      recorder = new Recorder();
    });

    afterEach(async () => {
      await Promise.all(subscriptions.map((subscription) => subscription.stop()));
      await fixture.dispose();
    });

    const publish = async (subject: string, body: string, id = nextId(), target: Bus = bus): Promise<string> => {
      await target.publish({ id, subject, data: bytes(body) });
      return id;
    };

    /**
     * A test's handler, but a message that reads SENTINEL is left unsettled on its first delivery
     * (so the bus delivers it again once ACK_WAIT_MS has passed) and acknowledged on its second;
     * it is counted apart, never recorded with the test's messages.
     */
    const sentinelDeliveries = new Map<string, number>();
    const withSentinel =
      (handler: MessageHandler): MessageHandler =>
      async (m) => {
        if (text(m.data) !== SENTINEL) return handler(m);
        sentinelDeliveries.set(m.id, (sentinelDeliveries.get(m.id) ?? 0) + 1);
        if (m.deliveryCount === 1) m.settleLater();
        else await m.ack();
      };
    /**
     * Publishes a sentinel to a durable whose handler is `withSentinel(…)`, after what the test
     * published, and waits for its second delivery. Ack wait has then passed for every message
     * delivered before it, so a message the bus was to deliver again (never settled, settled
     * twice, termed) has been delivered again by then: what the test has not seen will not come.
     * A fixed sleep would depend on the machine's speed instead.
     */
    const ackWaitPassed = async (subject: string, target: Bus = bus): Promise<void> => {
      const id = await publish(subject, SENTINEL, nextId(), target);
      await recorder.until('the sentinel delivered again, ack wait later', () => (sentinelDeliveries.get(id) ?? 0) >= 2, ACK_WAIT_MS * 25);
    };

    const subscribe = async (
      spec: Partial<DurableSubscriptionSpec> & { durable: string },
      handler: MessageHandler,
      target: Bus = bus,
    ): Promise<Subscription> => {
      const subscription = await target.subscribe(
        { stream: EVENTS.name, filterSubject: 'contract.evt.>', ackWaitMs: ACK_WAIT_MS, ...spec },
        handler,
      );
      subscriptions.push(subscription);
      return subscription;
    };

    describe('listeners (core, no consumer)', () => {
      it('hear the durable publishes on matching subjects from then on (a republished id may be heard again)', async () => {
        const heard: string[] = [];
        await publish('contract.evt.before', 'before');
        const listener = await bus.listen('contract.evt.>', (m) => heard.push(`${m.subject} ${text(m.data)}`));
        subscriptions.push(listener);
        await publish('contract.evt.stored', 'stored');
        await publish('contract.evt.last', 'last');
        await recorder.until('the last message heard', () => heard.includes('contract.evt.last last'));
        expect(heard).toEqual(['contract.evt.stored stored', 'contract.evt.last last']);
      });

      it('hear live publishes on subjects no stream captures, and only on the subjects they listen to', async () => {
        const heard: string[] = [];
        subscriptions.push(await bus.listen('contract.live.>', (m) => heard.push(`${m.subject} ${text(m.data)}`)));
        bus.publishLive('contract.other.progress', bytes('not heard'));
        bus.publishLive('contract.live.progress', bytes('one'));
        bus.publishLive('contract.live.progress', bytes('two'));
        await recorder.until('both live messages heard', () => heard.length >= 2);
        expect(heard).toEqual(['contract.live.progress one', 'contract.live.progress two']);
      });
    });

    describe('publish and durable subscribe', () => {
      it('delivers a published message with its id, subject, data and headers', async () => {
        await subscribe({ durable: 'basic' }, async (m) => recorder.record(m));
        const id = nextId();
        await bus.publish({ id, subject: 'contract.evt.created', data: bytes('hello'), headers: { 'x-trace': 'abc' } });
        await recorder.until('the message', () => recorder.seen.length === 1);
        expect(recorder.seen[0]).toMatchObject({
          id,
          subject: 'contract.evt.created',
          text: 'hello',
          deliveryCount: 1,
          headers: { 'x-trace': 'abc' },
        });
      });

      it('delivers a message published before the durable existed', async () => {
        const id = await publish('contract.evt.early', 'early');
        await subscribe({ durable: 'late' }, async (m) => recorder.record(m));
        await recorder.until('the early message', () => recorder.of(id).length === 1);
      });

      it('delivers only messages matching the filter subject', async () => {
        await subscribe({ durable: 'filtered', filterSubject: 'contract.evt.kept' }, async (m) => recorder.record(m));
        await publish('contract.evt.other', 'skip');
        const kept = await publish('contract.evt.kept', 'keep');
        const marker = await publish('contract.evt.kept', 'marker');
        await recorder.until('the marker', () => recorder.of(marker).length === 1);
        expect(recorder.seen.map((s) => s.id)).toEqual([kept, marker]);
      });

      it('drops a republished id within the duplicate window', async () => {
        await subscribe({ durable: 'dedupe' }, async (m) => recorder.record(m));
        const id = nextId();
        await publish('contract.evt.once', 'first', id);
        await publish('contract.evt.once', 'second', id);
        const marker = await publish('contract.evt.once', 'marker');
        await recorder.until('the marker', () => recorder.of(marker).length === 1);
        expect(recorder.of(id).map((s) => s.text)).toEqual(['first']);
      });

      it('keeps a durable position when its only subscriber stops', async () => {
        const first = await subscribe({ durable: 'resume' }, async (m) => recorder.record(m));
        const one = await publish('contract.evt.seq', 'one');
        await recorder.until('one', () => recorder.of(one).length === 1);
        await first.stop();
        const two = await publish('contract.evt.seq', 'two');
        const three = await publish('contract.evt.seq', 'three');
        await subscribe({ durable: 'resume' }, async (m) => recorder.record(m, 'b'));
        await recorder.until('two and three', () => recorder.of(three).length === 1);
        expect(recorder.seen.map((s) => [s.id, s.by])).toEqual([
          [one, 'a'],
          [two, 'b'],
          [three, 'b'],
        ]);
      });

      it('keeps messages of a limits stream for a durable created later', async () => {
        await subscribe({ durable: 'early-reader' }, async (m) => recorder.record(m, 'early'));
        const id = await publish('contract.evt.kept-for-all', 'x');
        await recorder.until('the early reader', () => recorder.of(id).length === 1);
        await subscribe({ durable: 'late-reader' }, async (m) => recorder.record(m, 'late'));
        await recorder.until('the late reader', () => recorder.of(id).length === 2);
        expect(recorder.of(id).map((s) => s.by)).toEqual(['early', 'late']);
      });

      it('refuses a second durable on overlapping subjects of a workqueue stream', async () => {
        await subscribe({ durable: 'worker', stream: COMMANDS.name, filterSubject: 'contract.cmd.>' }, async () => {});
        await expect(
          bus.subscribe(
            { durable: 'other-worker', stream: COMMANDS.name, filterSubject: 'contract.cmd.start', ackWaitMs: ACK_WAIT_MS },
            async () => {},
          ),
        ).rejects.toThrow();
      });

      it('hands workqueue messages to the durable and settles each once', async () => {
        await subscribe(
          { durable: 'commands', stream: COMMANDS.name, filterSubject: 'contract.cmd.>' },
          withSentinel(async (m) => recorder.record(m)),
        );
        const ids = [await publish('contract.cmd.start', 'a'), await publish('contract.cmd.stop', 'b')];
        await recorder.until('both commands', () => recorder.seen.length === 2);
        await ackWaitPassed('contract.cmd.sentinel');
        expect(recorder.seen.map((s) => [s.id, s.deliveryCount])).toEqual(ids.map((id) => [id, 1]));
      });

      it('refuses to publish to a subject no stream captures', async () => {
        await expect(publish('contract.nowhere', 'x')).rejects.toThrow();
      });
    });

    describe('queue semantics', () => {
      it('splits the messages of one durable between its subscribers, none to both', async () => {
        const peer = await fixture.open();
        const handler =
          (by: string): MessageHandler =>
          async (m) => {
            recorder.record(m, by);
            await sleep(15);
          };
        await subscribe({ durable: 'shared', batchSize: 1 }, handler('a'));
        await subscribe({ durable: 'shared', batchSize: 1 }, handler('b'), peer);
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) ids.push(await publish('contract.evt.work', `job ${i}`));
        await recorder.until('all jobs', () => new Set(recorder.seen.map((s) => s.id)).size === ids.length);
        await sleep(100);
        expect(recorder.seen).toHaveLength(ids.length);
        expect(recorder.seen.every((s) => s.deliveryCount === 1)).toBe(true);
        expect(recorder.seen.filter((s) => s.by === 'a').length).toBeGreaterThan(0);
        expect(recorder.seen.filter((s) => s.by === 'b').length).toBeGreaterThan(0);
      });
    });

    describe('settling', () => {
      it('redelivers after the handler throws, with deliveryCount 2', async () => {
        await subscribe({ durable: 'throws' }, async (m) => {
          recorder.record(m);
          if (m.deliveryCount === 1) throw new Error('transient');
        });
        const id = await publish('contract.evt.flaky', 'data');
        await recorder.until('the redelivery', () => recorder.of(id).length === 2);
        expect(recorder.of(id).map((s) => [s.deliveryCount, s.text])).toEqual([
          [1, 'data'],
          [2, 'data'],
        ]);
      });

      it('redelivers a nak with a delay no earlier than the delay', async () => {
        await subscribe({ durable: 'nak-delay' }, async (m) => {
          recorder.record(m);
          if (m.deliveryCount === 1) await m.nak(500);
        });
        const id = await publish('contract.evt.later', 'x');
        await recorder.until('the delayed redelivery', () => recorder.of(id).length === 2);
        const [first, second] = recorder.of(id);
        expect(second.deliveryCount).toBe(2);
        expect(second.at - first.at).toBeGreaterThanOrEqual(450);
      });

      it('never redelivers a termed message', async () => {
        await subscribe(
          { durable: 'term' },
          withSentinel(async (m) => {
            recorder.record(m);
            if (text(m.data) === 'poison') await m.term();
          }),
        );
        const poison = await publish('contract.evt.poison', 'poison');
        const marker = await publish('contract.evt.poison', 'marker');
        await recorder.until('the marker', () => recorder.of(marker).length === 1);
        await ackWaitPassed('contract.evt.poison');
        expect(recorder.of(poison)).toHaveLength(1);
      });

      it('ignores settling after the first settle (ack then throw is not redelivered)', async () => {
        await subscribe(
          { durable: 'settle-once' },
          withSentinel(async (m) => {
            recorder.record(m);
            if (text(m.data) === 'acked') {
              await m.ack();
              await m.nak();
              throw new Error('after ack');
            }
          }),
        );
        const acked = await publish('contract.evt.once-settled', 'acked');
        const marker = await publish('contract.evt.once-settled', 'marker');
        await recorder.until('the marker', () => recorder.of(marker).length === 1);
        await ackWaitPassed('contract.evt.once-settled');
        expect(recorder.of(acked)).toHaveLength(1);
      });

      it('settleLater: takes the next message before the first is settled, and the late ack holds', async () => {
        const held: DeliveredMessage[] = [];
        await subscribe(
          { durable: 'settle-later' },
          withSentinel(async (m) => {
            recorder.record(m);
            if (text(m.data) === 'held') {
              m.settleLater();
              held.push(m);
            }
          }),
        );
        const first = await publish('contract.evt.later', 'held');
        const second = await publish('contract.evt.later', 'next');
        // The second arrives while the first is still unsettled (sequential handling would wait ack wait).
        await recorder.until('the next message', () => recorder.of(second).length === 1);
        expect(recorder.of(first)).toHaveLength(1);
        await held[0]!.ack();
        await ackWaitPassed('contract.evt.later');
        expect(recorder.of(first)).toHaveLength(1);
      });

      it('settleLater: a message never settled is redelivered after ack wait', async () => {
        await subscribe({ durable: 'settle-later-forgotten' }, async (m) => {
          recorder.record(m);
          if (m.deliveryCount === 1) m.settleLater();
        });
        const forgotten = await publish('contract.evt.later-forgotten', 'forgotten');
        await recorder.until('the redelivery', () => recorder.of(forgotten).length === 2);
      });

      it('a backlog behind a slow handler: each message is handed out once, its ack wait counted from when its handling starts', async () => {
        // 30 messages at 60 ms each take 1.8 s, four and a half ack waits: a message waiting its
        // turn must not be handed out again, nor count a delivery towards maxDeliver while it waits.
        const ids: string[] = [];
        for (let i = 0; i < 30; i++) ids.push(await publish('contract.evt.backlog', `m${i}`));
        await subscribe({ durable: 'backlog', maxDeliver: 2 }, async (m) => {
          recorder.record(m);
          await sleep(60);
        });
        await recorder.until('every message', () => ids.every((id) => recorder.of(id).length >= 1), ACK_WAIT_MS * 25);
        expect(ids.filter((id) => recorder.of(id).length !== 1 || recorder.of(id)[0]!.deliveryCount !== 1)).toEqual([]);
      });

      it('redelivers a message not settled within ack wait to another subscriber', async () => {
        const peer = await fixture.open();
        const handler =
          (by: string): MessageHandler =>
          async (m) => {
            recorder.record(m, by);
            if (m.deliveryCount === 1) {
              await recorder.until('the redelivery', () => recorder.seen.length >= 2, ACK_WAIT_MS * 10).catch(() => undefined);
            }
          };
        await subscribe({ durable: 'slow', batchSize: 1 }, handler('a'));
        await subscribe({ durable: 'slow', batchSize: 1 }, handler('b'), peer);
        const id = await publish('contract.evt.slow', 'x');
        await recorder.until('the redelivery', () => recorder.of(id).length === 2, ACK_WAIT_MS * 10);
        const [first, second] = recorder.of(id);
        expect(second.deliveryCount).toBe(2);
        expect(second.by).not.toBe(first.by);
        expect(second.at - first.at).toBeGreaterThanOrEqual(ACK_WAIT_MS - 50);
      });

      it('stops redelivering after maxDeliver attempts', async () => {
        await subscribe(
          { durable: 'max-deliver', maxDeliver: 3 },
          withSentinel(async (m) => {
            recorder.record(m);
            throw new Error('always');
          }),
        );
        const id = await publish('contract.evt.doomed', 'x');
        await recorder.until('three attempts', () => recorder.of(id).length === 3);
        await ackWaitPassed('contract.evt.doomed');
        expect(recorder.of(id).map((s) => s.deliveryCount)).toEqual([1, 2, 3]);
      });
    });

    describe('stopping', () => {
      it('stop() waits for the handler in progress', async () => {
        let finished = false;
        const subscription = await subscribe({ durable: 'stop-waits' }, async (m) => {
          recorder.record(m);
          await sleep(300);
          finished = true;
        });
        await publish('contract.evt.long', 'x');
        await recorder.until('the handler to start', () => recorder.seen.length === 1);
        await subscription.stop();
        expect(finished).toBe(true);
      });

      it('close() lets the handler in progress complete, then refuses new work', async () => {
        let finished = false;
        await subscribe({ durable: 'close-drains' }, async (m) => {
          recorder.record(m);
          await sleep(300);
          finished = true;
        });
        await publish('contract.evt.long', 'x');
        await recorder.until('the handler to start', () => recorder.seen.length === 1);
        await bus.close();
        expect(finished).toBe(true);
        await expect(publish('contract.evt.long', 'after close')).rejects.toThrow();
        await bus.close();
      });
    });

    describe('request/reply', () => {
      it('answers a request', async () => {
        subscriptions.push(
          await bus.reply('contract.req.echo', 'echoers', async (data, headers) =>
            bytes(`${text(data)}/${headers['x-who'] ?? '?'}`),
          ),
        );
        const reply = await bus.request('contract.req.echo', bytes('ping'), { timeoutMs: 2_000, headers: { 'x-who': 'me' } });
        expect(text(reply)).toBe('ping/me');
      });

      it('fails with BusTimeoutError when no reply comes within the deadline', async () => {
        // The reply is held until the request has failed: it failed at its deadline, not at the
        // reply (a check of the time it took would depend on the machine's speed instead).
        let release: () => void = () => undefined;
        const released = new Promise<void>((resolve) => (release = resolve));
        subscriptions.push(
          await bus.reply('contract.req.slow', 'sleepers', async () => {
            await released;
            return bytes('late');
          }),
        );
        const failure = await bus.request('contract.req.slow', bytes('x'), { timeoutMs: 150 }).catch((err: unknown) => err);
        release();
        expect(failure).toBeInstanceOf(BusTimeoutError);
        expect(failure).toMatchObject({ subject: 'contract.req.slow', timeoutMs: 150 });
      });

      it('fails with BusNoRespondersError when nobody listens', async () => {
        const failure = await bus.request('contract.req.nobody', bytes('x'), { timeoutMs: 2_000 }).catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(BusNoRespondersError);
        expect(failure).toMatchObject({ subject: 'contract.req.nobody' });
      });

      it('fails with BusRemoteError carrying the message when the handler throws', async () => {
        subscriptions.push(
          await bus.reply('contract.req.broken', 'breakers', async () => {
            throw new Error('order 42 is locked');
          }),
        );
        const failure = await bus.request('contract.req.broken', bytes('x'), { timeoutMs: 2_000 }).catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(BusRemoteError);
        expect(failure).toMatchObject({ subject: 'contract.req.broken', message: 'order 42 is locked' });
      });

      it('shares requests within a queue group, each answered once', async () => {
        const peer = await fixture.open();
        const served = { a: 0, b: 0 };
        const responder = (by: 'a' | 'b') => async (data: Uint8Array) => {
          served[by]++;
          return data;
        };
        subscriptions.push(await bus.reply('contract.req.work', 'workers', responder('a')));
        subscriptions.push(await peer.reply('contract.req.work', 'workers', responder('b')));
        for (let i = 0; i < 20; i++) {
          expect(text(await bus.request('contract.req.work', bytes(`${i}`), { timeoutMs: 2_000 }))).toBe(`${i}`);
        }
        await sleep(100);
        expect(served.a + served.b).toBe(20);
        expect(served.a).toBeGreaterThan(0);
        expect(served.b).toBeGreaterThan(0);
      });

      it('stops answering after the reply subscription stops, letting a request in progress finish', async () => {
        let finished = false;
        const subscription = await bus.reply('contract.req.stopping', 'stoppers', async (data) => {
          await sleep(200);
          finished = true;
          return data;
        });
        const pending = bus.request('contract.req.stopping', bytes('x'), { timeoutMs: 2_000 });
        await sleep(50);
        await subscription.stop();
        expect(finished).toBe(true);
        expect(text(await pending)).toBe('x');
        await expect(bus.request('contract.req.stopping', bytes('x'), { timeoutMs: 500 })).rejects.toBeInstanceOf(
          BusNoRespondersError,
        );
      });
    });

    it('ping() resolves on an open bus', async () => {
      await expect(bus.ping()).resolves.toBeUndefined();
    });
  });
}
