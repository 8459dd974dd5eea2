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
