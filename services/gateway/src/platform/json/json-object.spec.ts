import { containsNul, MAX_BODY_DEPTH, nestingDepthExceeds } from './json-object.js';

describe('nestingDepthExceeds', () => {
  const nested = (depth: number, open: string, close: string) => open.repeat(depth) + close.repeat(depth);

  it('allows the limit and refuses one level more, for objects and arrays', () => {
    expect(nestingDepthExceeds(nested(MAX_BODY_DEPTH, '[', ']'), MAX_BODY_DEPTH)).toBe(false);
    expect(nestingDepthExceeds(nested(MAX_BODY_DEPTH + 1, '[', ']'), MAX_BODY_DEPTH)).toBe(true);
    expect(nestingDepthExceeds('{"a":'.repeat(MAX_BODY_DEPTH) + '1' + '}'.repeat(MAX_BODY_DEPTH), MAX_BODY_DEPTH)).toBe(false);
    expect(nestingDepthExceeds('{"a":'.repeat(MAX_BODY_DEPTH + 1) + '1' + '}'.repeat(MAX_BODY_DEPTH + 1), MAX_BODY_DEPTH)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestingDepthExceeds(JSON.stringify({ text: '['.repeat(1000) + '"\\' }), 2)).toBe(false);
  });

  it('takes a million levels without running out of stack', () => {
    expect(nestingDepthExceeds(nested(1_000_000, '[', ']'), MAX_BODY_DEPTH)).toBe(true);
  });
});

describe('containsNul', () => {
  /** The oracle: whether the parsed value holds a NUL in a key or a string. */
  const parsesToNul = (text: string): boolean => {
    let found = false;
    JSON.parse(text, (key: string, value: unknown) => {
      if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) found = true;
      return value;
    });
    return found;
  };

  it('finds the escape \\u0000 in a string or a key, after an escaped backslash too', () => {
    for (const text of ['{"a":"\\u0000"}', '{"\\u0000":1}', '{"a":"x\\\\\\u0000"}']) {
      expect({ text, nul: containsNul(text), oracle: parsesToNul(text) }).toEqual({ text, nul: true, oracle: true });
    }
  });

  it('does not take an escaped backslash before u0000, or another escape, for a NUL', () => {
    for (const text of ['{"a":"\\\\u0000"}', '{"a":"\\u0001"}', '{"a":"u0000"}']) {
      expect({ text, nul: containsNul(text), oracle: parsesToNul(text) }).toEqual({ text, nul: false, oracle: false });
    }
  });
});
