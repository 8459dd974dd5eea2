/**
 * Child process of the crash-safety test. Commits orders plus their events through the
 * outbox, then freezes at the chosen point so the parent can SIGKILL it there:
 * - `after-commit`: frozen right after COMMIT, where the relay would be woken to publish;
 * - `before-commit`: frozen inside the transaction, after the writes, before COMMIT.
 * It prints `committed` / `inside` when frozen.
 *
 * Usage: node --import ./ts-register.mjs commit-then-crash.ts <url> <schema> <mode> <count> <idPrefix>
 */
import { writeSync } from 'node:fs';
import { TransactionRunner } from '../../src/index.js';
import { orderEvent, testDataSource } from './test-schema.js';

const [url, schema, mode, countText, idPrefix] = process.argv.slice(2);
if (!url || !schema || (mode !== 'after-commit' && mode !== 'before-commit') || !countText || !idPrefix) {
  throw new Error('usage: commit-then-crash.ts <url> <schema> after-commit|before-commit <count> <idPrefix>');
}

// Blocks the whole process (no relay, no timers, nothing) until it is killed.
function freeze(signal: string): never {
  writeSync(1, `${signal}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  throw new Error('unreachable');
}

const dataSource = testDataSource(url, schema);
await dataSource.initialize();
const runner = new TransactionRunner(dataSource, { notify: () => freeze('committed') });
await runner.run(async (tx) => {
  for (let i = 0; i < Number(countText); i++) {
    await tx.manager.query(`INSERT INTO orders (id, status) VALUES ($1, 'created')`, [`order-${i}`]);
    tx.emit(orderEvent(`${idPrefix}-${i}`, `order-${i}`));
  }
  if (mode === 'before-commit') freeze('inside');
});
