import { InProcessBus } from '@runline/bus';
import { describeBusContract } from '../test/bus.contract.js';

describeBusContract('InProcessBus', async () => {
  const bus = new InProcessBus();
  return {
    // One process: every "replica" shares the one instance.
    open: async () => bus,
    dispose: () => bus.close(),
  };
});

describe('InProcessBus specifics', () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('never runs a handler inside publish', async () => {
    const bus = new InProcessBus();
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    let handled = 0;
    const subscription = await bus.subscribe({ stream: 'S', durable: 'd', filterSubject: 's.>' }, async () => {
      handled++;
    });
    await new Promise((resolve) => setImmediate(resolve));
    const publishing = bus.publish({ id: '1', subject: 's.x', data: bytes('x') });
    expect(handled).toBe(0);
    await publishing;
    expect(handled).toBe(0);
    await subscription.stop();
    await bus.close();
  });

  it('refuses streams whose subjects overlap another stream', async () => {
    const bus = new InProcessBus();
    await bus.ensureStreams([{ name: 'A', subjects: ['a.>'], retention: 'limits' }]);
    await expect(bus.ensureStreams([{ name: 'B', subjects: ['a.b'], retention: 'limits' }])).rejects.toThrow(/overlap/);
    await bus.close();
  });

  it('refuses to change the retention of a stream', async () => {
    const bus = new InProcessBus();
    await bus.ensureStreams([{ name: 'A', subjects: ['a.>'], retention: 'limits' }]);
    await expect(bus.ensureStreams([{ name: 'A', subjects: ['a.>'], retention: 'workqueue' }])).rejects.toThrow(/retention/);
    await bus.close();
  });

  it('drops the oldest messages of a limits stream beyond its cap', async () => {
    const bus = new InProcessBus({ maxMessagesPerStream: 2 });
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    for (const id of ['1', '2', '3']) await bus.publish({ id, subject: 's.x', data: bytes(id) });
    const seen: string[] = [];
    const subscription = await bus.subscribe({ stream: 'S', durable: 'd', filterSubject: 's.>' }, async (m) => {
      seen.push(m.id);
    });
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual(['2', '3']);
    await subscription.stop();
    await bus.close();
  });

  it('keeps at most keepSettledMessages of what every durable settled, and never drops what one has not', async () => {
    const bus = new InProcessBus({ keepSettledMessages: 10 });
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    const waitFor = async (condition: () => boolean) => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    const subscribe = async (durable: string, seen: string[]) =>
      bus.subscribe({ stream: 'S', durable, filterSubject: 's.>' }, async (m) => {
        seen.push(m.id);
      });
    const fast: string[] = [];
    await subscribe('fast', fast);
    // A durable that settled nothing yet: its messages must stay, however many come.
    await (await subscribe('slow', [])).stop();
    const publish = async (from: number, to: number) => {
      for (let n = from; n < to; n++) await bus.publish({ id: `m${n}`, subject: 's.x', data: bytes(String(n)) });
    };
    await publish(0, 600);
    await waitFor(() => fast.length === 600);
    const slow: string[] = [];
    const resumed = await subscribe('slow', slow);
    await waitFor(() => slow.length === 600);
    expect(slow).toEqual(fast);

    // Both settled the first 600; the next appends drop all but the newest settled ones.
    await publish(600, 900);
    await waitFor(() => fast.length === 900 && slow.length === 900);
    await publish(900, 1200);
    await waitFor(() => fast.length === 1200 && slow.length === 1200);
    const late: string[] = [];
    const lateSubscription = await subscribe('late', late);
    await waitFor(() => late.includes('m1199'));
    expect(late.length).toBeLessThan(600);
    expect(late.slice(-1)).toEqual(['m1199']);

    await resumed.stop();
    await lateSubscription.stop();
    await bus.close();
  });

  it('drops settled messages as durables settle them, when nothing more is published', async () => {
    const bus = new InProcessBus({ keepSettledMessages: 10 });
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    const waitFor = async (condition: () => boolean) => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    // The durable exists but takes nothing while the burst comes in.
    await (await bus.subscribe({ stream: 'S', durable: 'd', filterSubject: 's.>' }, async () => {})).stop();
    for (let n = 0; n < 600; n++) await bus.publish({ id: `m${n}`, subject: 's.x', data: bytes(String(n)) });
    const seen: string[] = [];
    const subscription = await bus.subscribe({ stream: 'S', durable: 'd', filterSubject: 's.>' }, async (m) => {
      seen.push(m.id);
    });
    await waitFor(() => seen.length === 600);
    const late: string[] = [];
    const lateSubscription = await bus.subscribe({ stream: 'S', durable: 'late', filterSubject: 's.>' }, async (m) => {
      late.push(m.id);
    });
    await waitFor(() => late.includes('m599'));
    expect(late.length).toBeLessThan(600);
    await subscription.stop();
    await lateSubscription.stop();
    await bus.close();
  });

  it('remembers at most maxDuplicateIds ids for its duplicate window, forgetting the oldest', async () => {
    const bus = new InProcessBus({ maxDuplicateIds: 2 });
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    for (const id of ['1', '2', '3', '3', '1']) await bus.publish({ id, subject: 's.x', data: bytes(id) });
    const seen: string[] = [];
    const subscription = await bus.subscribe({ stream: 'S', durable: 'd', filterSubject: 's.>' }, async (m) => {
      seen.push(m.id);
    });
    while (seen.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    // The second 3 is dropped (remembered); the second 1 is not (forgotten for 2 and 3).
    expect(seen).toEqual(['1', '2', '3', '1']);
    await subscription.stop();
    await bus.close();
  });

  it('refuses reserved or multi-line headers', async () => {
    const bus = new InProcessBus();
    await bus.ensureStreams([{ name: 'S', subjects: ['s.>'], retention: 'limits' }]);
    await expect(bus.publish({ id: '1', subject: 's.x', data: bytes('x'), headers: { 'Nats-Msg-Id': '2' } })).rejects.toThrow(
      /reserved/,
    );
    await expect(bus.publish({ id: '1', subject: 's.x', data: bytes('x'), headers: { a: 'b\r\nc: d' } })).rejects.toThrow(
      /line break/,
    );
    await bus.close();
  });
});
