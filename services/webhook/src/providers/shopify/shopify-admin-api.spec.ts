import { shopifyRetryAfterMs, userErrorMessage, userErrorsOf } from './shopify-admin-api.js';

describe('Shopify Admin API answers', () => {
  it('reads Retry-After as seconds with a fraction (Shopify sends "2.0"), whole seconds or an HTTP date', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const read = (value: string | undefined) => shopifyRetryAfterMs(value === undefined ? {} : { 'retry-after': value }, now);
    expect(read('2.0')).toBe(2000);
    expect(read('0.25')).toBe(250);
    expect(read(' 7 ')).toBe(7000);
    expect(read('Tue, 01 Jan 2030 00:00:30 GMT')).toBe(30_000);
    expect(read('Mon, 31 Dec 2029 23:00:00 GMT')).toBe(0);
    for (const unreadable of [undefined, '', '-1', 'soon', '1e3', '1.', '.5', '2.0.0']) expect(read(unreadable)).toBeNull();
  });

  it('reads userErrors leniently and joins their messages', () => {
    const errors = userErrorsOf({ userErrors: [{ field: ['webhookSubscription', 'callbackUrl'], message: "Address can't be blank" }, { field: null, message: 'Second' }, 'junk'] });
    expect(errors).toEqual([
      { field: ['webhookSubscription', 'callbackUrl'], message: "Address can't be blank" },
      { field: null, message: 'Second' },
    ]);
    expect(userErrorMessage(errors)).toBe("Address can't be blank; Second");
    expect(userErrorsOf(null)).toEqual([]);
    expect(userErrorsOf({ userErrors: [] })).toEqual([]);
  });
});
