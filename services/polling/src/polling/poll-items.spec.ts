import { DEFAULT_DEDUPE_FIELD, dedupeValueOf, itemPayload, itemRunBody, itemRunKey, itemsOf, selectItems } from './poll-items.js';

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

describe('item run keys', () => {
  const poll = { id: '5f0c1c9e-1d2b-4c41-9a55-3f1f3c0f2a10', dueAt: new Date('2030-01-01T00:00:00.000Z') };

  it('the same trigger, due time and item give the same key; any of them changed, another', () => {
    const key = itemRunKey(poll, { index: 0, item: { id: 'a' }, dedupeValue: 'a' });
    expect(key).toMatch(/^poll-[0-9a-f]{48}$/);
    expect(itemRunKey({ ...poll }, { index: 0, item: { id: 'a', extra: 1 }, dedupeValue: 'a' })).toBe(key);
    const others = [
      itemRunKey({ ...poll, id: 'a8d8a3c2-0c43-4c53-8a0f-2b1f8c7e7d11' }, { index: 0, item: {}, dedupeValue: 'a' }),
      itemRunKey({ ...poll, dueAt: new Date('2030-01-01T00:01:00.000Z') }, { index: 0, item: {}, dedupeValue: 'a' }),
      itemRunKey(poll, { index: 1, item: {}, dedupeValue: 'a' }),
      itemRunKey(poll, { index: 0, item: {}, dedupeValue: null }),
    ];
    expect(new Set([key, ...others]).size).toBe(5);
  });

  it('a trigger that names no dedupe field dedupes on id', () => {
    expect(DEFAULT_DEDUPE_FIELD).toBe('id');
  });
});

describe('the run body of an item', () => {
  const payload = itemPayload({ id: 7, webhookUrl: 'https://x.example', orderId: 'o-7' }, 'crm', 'orders');

  it("is the payload itself for a chatbot's flow", () => {
    expect(itemRunBody(payload, 'FLOW')).toEqual({ id: 7, webhookUrl: 'https://x.example', orderId: 'o-7', source: 'crm', _pollKey: 'orders' });
  });

  it("is { payload } for an automation's workflow, so no item field steers the run", () => {
    expect(itemRunBody(payload, 'AUTOMATION')).toEqual({ payload: { id: 7, webhookUrl: 'https://x.example', orderId: 'o-7', source: 'crm', _pollKey: 'orders' } });
  });
});
