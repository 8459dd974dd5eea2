import { InvocationConfig } from '../config.js';
import { RunLease } from './run-lease.js';

describe('RunLease', () => {
  const lease = new RunLease(Object.assign(new InvocationConfig(), { RUN_LEASE_MS: 3000 }));

  it('knows the runs this process executes until each hold is released, counting nested holds', () => {
    const releaseA = lease.hold('a');
    const releaseAgain = lease.hold('a');
    const releaseB = lease.hold('b');
    expect(lease.executingIds().sort()).toEqual(['a', 'b']);
    releaseA();
    expect(lease.executingIds().sort()).toEqual(['a', 'b']);
    releaseAgain();
    releaseB();
    expect(lease.executingIds()).toEqual([]);
  });

  it('calls a lease spent once a third of its length has passed', () => {
    expect(lease.isSpent(lease.next().expiresAt)).toBe(false);
    expect(lease.isSpent(new Date(Date.now() + 2100))).toBe(false);
    expect(lease.isSpent(new Date(Date.now() + 1900))).toBe(true);
    expect(lease.isSpent(new Date(Date.now() - 1))).toBe(true);
  });
});
