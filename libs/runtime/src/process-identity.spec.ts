import { hostname } from 'node:os';
import { instanceIdentity } from './process-identity.js';

describe('instanceIdentity', () => {
  it('names the host and the process, and differs for every instance of one process', () => {
    const first = instanceIdentity();
    expect(first.startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
    const many = new Set(Array.from({ length: 1000 }, () => instanceIdentity()));
    expect(many.size).toBe(1000);
  });
});
