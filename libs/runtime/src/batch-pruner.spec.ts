import { createLogger } from '@runline/observability';
import { BatchPruner } from './batch-pruner.js';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('BatchPruner', () => {
  it('deletes batch after batch until one comes back short, everything older than the retention', async () => {
    let left = 2_500;
    const befores: Date[] = [];
    const pruner = new BatchPruner({
      what: 'rows',
      retentionMs: 60_000,
      intervalMs: 3_600_000,
      batchSize: 1_000,
      deleteBatch: async (before, limit) => {
        befores.push(before);
        const deleted = Math.min(left, limit);
        left -= deleted;
        return deleted;
      },
      logger,
    });
    const now = new Date('2026-11-27T12:00:00Z');
    expect(await pruner.prune(now)).toBe(2_500);
    expect(befores.map((before) => before.toISOString())).toEqual(Array(3).fill('2026-11-27T11:59:00.000Z'));
  });

  it('runs one round at a time, and a failed round answers what it deleted before the failure', async () => {
    let calls = 0;
    let release: () => void = () => undefined;
    const pruner = new BatchPruner({
      what: 'rows',
      retentionMs: 0,
      intervalMs: 3_600_000,
      batchSize: 10,
      deleteBatch: async () => {
        calls++;
        if (calls === 1) {
          await new Promise<void>((resolve) => (release = resolve));
          return 10;
        }
        throw new Error('connection lost');
      },
      logger,
    });
    const first = pruner.prune();
    const second = pruner.prune();
    expect(second).toBe(first);
    release();
    expect(await first).toBe(10);
    expect(calls).toBe(2);
  });
});
