import { dedupeValueOf, itemPayload, itemsOf, selectItems } from './poll-items.js';

describe('poll response shapes', () => {
  it('takes an array, an object with a data array, or a single object', () => {
    expect(itemsOf([{ id: 1 }, { id: 2 }])).toEqual({ items: [{ id: 1 }, { id: 2 }] });
    expect(itemsOf({ data: [{ id: 3 }], next: null })).toEqual({ items: [{ id: 3 }] });
    expect(itemsOf({ id: 4, data: 'not a list' })).toEqual({ items: [{ id: 4, data: 'not a list' }] });
    expect(itemsOf([])).toEqual({ items: [] });
  });

  it('refuses JSON that is neither an array nor an object', () => {
    for (const body of [null, 42, 'text', true]) expect(itemsOf(body)).toEqual({ problem: 'Poll response is not a JSON array or object' });
  });
});

describe('the lastSeenValue rule', () => {
  const ids = (values: Array<string | number>) => values.map((id) => ({ id }));

  it('runs everything on the first poll and remembers the last processed value', () => {
    const result = selectItems(ids([1, 2, 3]), 'id', null);
    expect(result.selected.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(result.lastSeenValue).toBe('3');
  });

  it('skips only the remembered value, so older items that come back run again', () => {
    const result = selectItems(ids([1, 2, 3, 4]), 'id', '3');
    expect(result.selected.map((s) => s.item)).toEqual(ids([1, 2, 4]));
    expect(result.lastSeenValue).toBe('4');
  });

  it('keeps the remembered value when nothing new came', () => {
    expect(selectItems(ids([3]), 'id', '3')).toEqual({ selected: [], lastSeenValue: '3' });
    expect(selectItems([], 'id', '3')).toEqual({ selected: [], lastSeenValue: '3' });
  });

  it('runs items without the field and leaves the remembered value alone', () => {
    const result = selectItems([{ name: 'a' }, { id: 7 }, { name: 'b' }], 'id', '5');
    expect(result.selected).toHaveLength(3);
    expect(result.lastSeenValue).toBe('7');
  });

  it('uses the configured dedupeField', () => {
    const result = selectItems([{ id: 1, ref: 'x' }, { id: 2, ref: 'y' }], 'ref', 'x');
    expect(result.selected.map((s) => s.index)).toEqual([1]);
    expect(result.lastSeenValue).toBe('y');
  });

  it('compares values as text', () => {
    expect(dedupeValueOf({ id: 12 }, 'id')).toBe('12');
    expect(dedupeValueOf({ id: true }, 'id')).toBe('true');
    expect(dedupeValueOf({ id: { a: 1 } }, 'id')).toBe('{"a":1}');
    expect(dedupeValueOf({ id: null }, 'id')).toBeNull();
    expect(dedupeValueOf(5, 'id')).toBeNull();
  });
});

describe('item payloads', () => {
  it('adds source and _pollKey to the item fields', () => {
    expect(itemPayload({ id: 1, event: 'order', customerId: 'c1' }, 'shop', 'orders')).toEqual({
      id: 1,
      event: 'order',
      customerId: 'c1',
      source: 'shop',
      _pollKey: 'orders',
    });
  });
});
