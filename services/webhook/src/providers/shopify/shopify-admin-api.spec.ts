import { retryAfterMs, userErrorMessage, userErrorsOf } from './shopify-admin-api.js';

describe('Shopify Admin API answers', () => {
  it('reads Retry-After as seconds (Shopify sends "2.0") or as an HTTP date', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs('2.0', now)).toBe(2000);
    expect(retryAfterMs(' 7 ', now)).toBe(7000);
    expect(retryAfterMs('0.25', now)).toBe(250);
    expect(retryAfterMs('Tue, 01 Jan 2030 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Mon, 31 Dec 2029 23:00:00 GMT', now)).toBe(0);
    for (const unreadable of [undefined, '', '-1', 'soon', '1e3']) expect(retryAfterMs(unreadable, now)).toBeNull();
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
