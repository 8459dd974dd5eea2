import { EventEmitter } from 'node:events';
import type { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { FlowDispatcher } from './flow-dispatcher.js';
import type { FlowControl } from './run-flow-control.js';
import type { RunStarter } from './run-starter.js';

/** When the dispatcher looks for waiting runs: its reads are counted by a database that finds none. */
describe("flow control's dispatcher, when a run stops", () => {
  it('looks when a stopped run may have freed a place for a waiting one, not after every run once nothing waits', async () => {
    let reads = 0;
    const manager = {
      query: () => {
        reads++;
        return Promise.resolve([]);
      },
    };
    const transactions = { dataSource: { manager } } as unknown as TransactionRunner;
    const events = new EventEmitter();
    const dispatcher = new FlowDispatcher(transactions, {} as RunStarter, { events } as unknown as FlowControl, { warn: () => undefined } as unknown as Logger);
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    dispatcher.onApplicationBootstrap();
    try {
      // At first it cannot know: it looks, and finds nothing waiting.
      events.emit('released');
      await settled();
      expect(reads).toBe(1);
      // Runs stop, nothing was held back since: no look (the poll still looks every 100 ms).
      events.emit('released');
      events.emit('released');
      await settled();
      expect(reads).toBe(1);
      // A run held back here: the next run that stops wakes a look.
      events.emit('held');
      events.emit('released');
      await settled();
      expect(reads).toBe(2);
    } finally {
      await dispatcher.onApplicationShutdown();
    }
  });
});
