import { RequestOne, type MuxSubscription } from '@nats-io/nats-core/internal';
// The bus itself, not the fix's module: the fix must come with it.
import './jetstream-bus.js';

describe('a settled NATS request is cancelled without a new error', () => {
  const mux = { cancel: () => undefined } as unknown as MuxSubscription;
  const request = () => new RequestOne(mux, 'subject', { timeout: 1000 }, false);
  const reasonOf = (promise: Promise<unknown>) => promise.then(() => undefined, (reason: unknown) => reason);

  it('rejects every request cancelled without a reason with one error built once, not an error each', async () => {
    const first = request();
    const second = request();
    first.cancel();
    second.cancel();
    const reasons = await Promise.all([reasonOf(first.deferred), reasonOf(second.deferred)]);
    expect(reasons[0]).toBeInstanceOf(Error);
    expect((reasons[0] as Error).message).toBe('cancelled');
    expect(reasons[1]).toBe(reasons[0]);
  });

  it('keeps a reason it is given (a failed publish, a closed connection)', async () => {
    const failed = request();
    const closed = new Error('connection closed');
    failed.cancel(closed);
    await expect(failed.deferred).rejects.toBe(closed);
  });

  it('still resolves a request whose reply came', async () => {
    const answered = request();
    const reply = { data: new Uint8Array() } as never;
    answered.resolver(null, reply);
    await expect(answered.deferred).resolves.toBe(reply);
  });
});
