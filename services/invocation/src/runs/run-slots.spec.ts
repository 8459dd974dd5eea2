import { RunSlots } from './run-slots.js';

describe('RunSlots', () => {
  it('tryAcquire takes a free slot and refuses when none is left', () => {
    const slots = new RunSlots(2);
    expect(slots.tryAcquire()).toBe(true);
    expect(slots.tryAcquire()).toBe(true);
    expect(slots.tryAcquire()).toBe(false);
    slots.release();
    expect(slots.tryAcquire()).toBe(true);
  });

  it('hands a released slot to the longest waiter, ahead of a later tryAcquire', async () => {
    const slots = new RunSlots(1);
    await slots.acquire();
    const order: string[] = [];
    const first = slots.acquire().then(() => order.push('first'));
    const second = slots.acquire().then(() => order.push('second'));
    slots.release();
    expect(slots.tryAcquire()).toBe(false);
    await first;
    expect(order).toEqual(['first']);
    slots.release();
    await second;
    expect(order).toEqual(['first', 'second']);
  });

  it('acquireWithin takes a slot released in time, and gives up with nothing taken when none is', async () => {
    const slots = new RunSlots(1);
    await slots.acquire();
    const inTime = slots.acquireWithin(1000);
    slots.release();
    expect(await inTime).toBe(true);

    expect(await slots.acquireWithin(20)).toBe(false);
    // The waiter that gave up left the queue: the next release frees the slot for anyone.
    slots.release();
    expect(slots.tryAcquire()).toBe(true);
  });

  it('track holds the slot until the work settles, and drain waits for it', async () => {
    const slots = new RunSlots(1);
    await slots.acquire();
    let finish: () => void = () => undefined;
    slots.track(new Promise<void>((resolve) => (finish = resolve)));
    expect(slots.tryAcquire()).toBe(false);
    finish();
    await slots.drain();
    expect(slots.tryAcquire()).toBe(true);
  });

  it('says how many slots are free, and calls onFree when a slot frees, not when a release goes straight to a waiter', async () => {
    let freed = 0;
    const slots = new RunSlots(2, () => freed++);
    expect(slots.available).toBe(2);
    await slots.acquire();
    await slots.acquire();
    expect(slots.available).toBe(0);
    const waiter = slots.acquire();
    slots.release();
    await waiter;
    expect([slots.available, freed]).toEqual([0, 0]);
    slots.release();
    expect([slots.available, freed]).toEqual([1, 1]);
  });

  it('lend frees the slot while its holder waits, and takes one back (once) ahead of the callers waiting for their first', async () => {
    const slots = new RunSlots(1);
    await slots.acquire();
    const order: string[] = [];
    const takeBack = slots.lend();
    // The lent slot is free for another start meanwhile.
    expect(slots.tryAcquire()).toBe(true);
    const later = slots.acquire().then(() => order.push('later'));
    const back = takeBack().then(() => order.push('lender'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    // The slot taken meanwhile comes back: the lender has it first, though `later` asked before it.
    slots.release();
    await back;
    await takeBack();
    expect(order).toEqual(['lender']);
    slots.release();
    await later;
    expect(order).toEqual(['lender', 'later']);
    expect(slots.available).toBe(0);
  });
});
