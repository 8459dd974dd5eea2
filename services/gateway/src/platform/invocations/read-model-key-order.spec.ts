import { inReadModelKeyOrder } from './read-model-key-order.js';

describe('inReadModelKeyOrder: keys as the jsonb read model gives them back', () => {
  it('orders keys shorter first, then bytewise, at every depth; arrays keep their order', () => {
    const value = { messages: ['Order 42'], actions: [{ type: 'tag', b: 1, a: 2 }], b: { zz: 1, a: 2 }, z: 0 };
    expect(JSON.stringify(inReadModelKeyOrder(value))).toBe('{"b":{"a":2,"zz":1},"z":0,"actions":[{"a":2,"b":1,"type":"tag"}],"messages":["Order 42"]}');
  });

  it('measures a key in UTF-8 bytes, as PostgreSQL does: "é" (2 bytes) follows "z"', () => {
    expect(Object.keys(inReadModelKeyOrder({ é: 1, z: 0, ab: 2 }) as object)).toEqual(['z', 'ab', 'é']);
  });

  it('keeps a "__proto__" key as a key, and leaves scalars alone', () => {
    const parsed = JSON.parse('{"__proto__":{"x":1},"a":1}') as unknown;
    expect(JSON.stringify(inReadModelKeyOrder(parsed))).toBe('{"a":1,"__proto__":{"x":1}}');
    expect(inReadModelKeyOrder('text')).toBe('text');
    expect(inReadModelKeyOrder(null)).toBeNull();
  });
});
