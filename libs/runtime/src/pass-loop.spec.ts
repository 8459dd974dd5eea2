import { PassLoop } from './pass-loop.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('PassLoop', () => {
  it('runs one pass at a time, and one more for any number of wake-ups during a pass', async () => {
    const gates: Array<() => void> = [];
    let active = 0;
    let most = 0;
    let passes = 0;
    const loop = new PassLoop(async () => {
      passes++;
      active++;
      most = Math.max(most, active);
      const gate = deferred();
      gates.push(gate.resolve);
      await gate.promise;
      active--;
    });
    loop.wake();
    loop.wake();
    loop.wake();
    await Promise.resolve();
    expect(passes).toBe(1);
    gates.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(passes).toBe(2);
    gates.shift()!();
    await loop.stop();
    expect(passes).toBe(2);
    expect(most).toBe(1);
  });

  it('waits for the pass in progress when stopped, and ignores wake-ups after', async () => {
    const gate = deferred();
    let passes = 0;
    const loop = new PassLoop(async () => {
      passes++;
      await gate.promise;
    });
    loop.wake();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    loop.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(passes).toBe(1);
  });
});
