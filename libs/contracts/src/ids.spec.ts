import { randomUUID } from 'node:crypto';
import { isUuid, UUID_TEXT } from '@runline/contracts';

describe('isUuid', () => {
  it('takes a UUID of any version, in either case', () => {
    const id = randomUUID();
    expect(isUuid(id)).toBe(true);
    expect(isUuid(id.toUpperCase())).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid('0f8fad5b-d9cb-869f-a165-70867728950e')).toBe(true); // version 8, as delivery keys are
  });

  it('refuses anything else: other shapes, braces, missing dashes, extra text, no value', () => {
    for (const value of ['', 'abc', `{${randomUUID()}}`, randomUUID().replace(/-/g, ''), `${randomUUID()} `, `${randomUUID()}\n`, 'g0000000-0000-0000-0000-000000000000', undefined, null]) {
      expect(isUuid(value)).toBe(false);
    }
  });

  it('UUID_TEXT is the lower-case form, to compose stricter patterns from', () => {
    const exact = new RegExp(`^${UUID_TEXT}$`);
    expect(exact.test(randomUUID())).toBe(true);
    expect(exact.test(randomUUID().toUpperCase())).toBe(false);
  });
});
