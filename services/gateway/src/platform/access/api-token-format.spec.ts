import { ApiTokenFormat, hashApiToken } from './api-token-format.js';

describe('ApiTokenFormat', () => {
  const format = new ApiTokenFormat('rl');

  it('issues rl_ext_ tokens that pass their own checksum', () => {
    const issued = format.issue();
    expect(issued.token).toMatch(/^rl_ext_[0-9A-Za-z]{38}$/);
    expect(format.isWellFormed(issued.token)).toBe(true);
    expect(issued.hash).toBe(hashApiToken(issued.token));
    expect(issued.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(issued.token.startsWith(issued.displayPrefix)).toBe(true);
    expect(issued.displayPrefix).toHaveLength('rl_ext_'.length + 4);
  });

  it('issues a different token every time', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => format.issue().token));
    expect(tokens.size).toBe(200);
  });

  it('refuses a token with one character changed', () => {
    const { token } = format.issue();
    const i = 'rl_ext_'.length + 5;
    const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
    expect(format.isWellFormed(changed)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['another prefix', new ApiTokenFormat('xy').issue().token],
    ['too short', 'rl_ext_abc'],
    ['bad characters', `rl_ext_${'!'.repeat(38)}`],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig'],
  ])('refuses %s', (_name, token) => {
    expect(format.isWellFormed(token)).toBe(false);
  });

  it('rejects a prefix that would make tokens ambiguous', () => {
    expect(() => new ApiTokenFormat('Bad_Prefix')).toThrow(/prefix/);
  });
});
