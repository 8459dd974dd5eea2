import { randomFillSync } from 'node:crypto';

const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

/**
 * A W3C trace context id of `bytes` random bytes (8: a span id) in lower-case hex, never all
 * zero (an invalid id). Read from a pool of random bytes refilled 4 KiB at a time: a UUID made
 * and cut down per id showed in the poller's profile (a client span for every poll).
 */
export function randomTraceId(bytes: 8 | 16): string {
  let id: string;
  do {
    if (randomOffset + bytes > randomPool.length) {
      randomPool = randomFillSync(Buffer.allocUnsafe(RANDOM_POOL_BYTES));
      randomOffset = 0;
    }
    id = randomPool.toString('hex', randomOffset, randomOffset + bytes);
    randomOffset += bytes;
  } while (/^0+$/.test(id));
  return id;
}
