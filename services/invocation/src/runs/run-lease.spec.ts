import { jest } from '@jest/globals';
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

  it('counts a run as executing from the moment it is leased here, until its execution ends or, never executed, for four leases and at least a minute', () => {
    jest.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    try {
      const leased = new RunLease(Object.assign(new InvocationConfig(), { RUN_LEASE_MS: 1500 }));
      leased.next('claimed');
      leased.next('never-executed');
      // The claim's commit took far longer than four short leases (a starved machine): the run is still this process's.
      jest.advanceTimersByTime(20_000);
      expect(leased.executingIds().sort()).toEqual(['claimed', 'never-executed']);
      const release = leased.hold('claimed');
      jest.advanceTimersByTime(40_000);
      expect(leased.executingIds()).toEqual(['claimed']);
      release();
      expect(leased.executingIds()).toEqual([]);

      // With a long lease, four leases.
      const long = new RunLease(Object.assign(new InvocationConfig(), { RUN_LEASE_MS: 30_000 }));
      long.next('slow');
      jest.advanceTimersByTime(119_000);
      expect(long.executingIds()).toEqual(['slow']);
      jest.advanceTimersByTime(1_000);
      expect(long.executingIds()).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('calls a lease spent once a third of its length has passed', () => {
    expect(lease.isSpent(lease.next('spent').expiresAt)).toBe(false);
    expect(lease.isSpent(new Date(Date.now() + 2100))).toBe(false);
    expect(lease.isSpent(new Date(Date.now() + 1900))).toBe(true);
    expect(lease.isSpent(new Date(Date.now() - 1))).toBe(true);
  });
});
