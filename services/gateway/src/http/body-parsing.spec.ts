import { MAX_BODY_DEPTH, nestingDepthExceeds } from './body-parsing.js';

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
