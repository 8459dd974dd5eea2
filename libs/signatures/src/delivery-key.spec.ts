import { randomUUID } from 'node:crypto';
import { deliveryKeyOf } from './delivery-key.js';

describe('deliveryKeyOf', () => {
  it('gives the same delivery the same UUID-shaped key, whatever the case of the hook id', () => {
    const hook = randomUUID();
    const key = deliveryKeyOf(hook, 'evt-1');
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryKeyOf(hook, 'evt-1')).toBe(key);
    expect(deliveryKeyOf(hook.toUpperCase(), 'evt-1')).toBe(key);
  });

  it('gives another id, or the same id at another hook, another key', () => {
    const hook = randomUUID();
    const keys = [deliveryKeyOf(hook, 'evt-1'), deliveryKeyOf(hook, 'evt-2'), deliveryKeyOf(hook, 'EVT-1'), deliveryKeyOf(randomUUID(), 'evt-1')];
    expect(new Set(keys).size).toBe(4);
  });
});
