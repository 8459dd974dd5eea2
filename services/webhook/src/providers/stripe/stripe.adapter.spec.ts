import { StripeAdapter } from './stripe.adapter.js';

describe('StripeAdapter', () => {
  const adapter = new StripeAdapter();
  const KEY_ERROR = 'credentials.secretKey must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)';

  it('takes a secret or restricted key as {secretKey}, and keeps nothing else', () => {
    for (const secretKey of ['sk_test_4eC39HqLyjWDarjtT1zdp7dc', 'sk_live_51Habcdefgh', 'rk_test_abcdefgh12']) {
      expect(adapter.parseCredentials({ secretKey, other: 'dropped' })).toEqual({ ok: true, credentials: { secretKey } });
    }
    for (const input of [null, 'sk_test_4eC39HqLyjWDarjtT1zdp7dc', {}, { secretKey: 42 }, { secretKey: 'pk_test_4eC39HqLyjWDarjtT1zdp7dc' }, { secretKey: 'sk_test_short' }, { secretKey: 'sk_test_4eC39 HqLyjWD' }]) {
      expect(adapter.parseCredentials(input)).toEqual({ ok: false, error: KEY_ERROR });
    }
  });

  it('takes dotted lower-case event names and *, and names the first bad one', () => {
    expect(adapter.checkEvents(['charge.succeeded', 'customer.subscription.updated', 'payment_intent.payment_failed', '*'])).toEqual({ ok: true });
    expect(adapter.checkEvents(['charge.succeeded', 'Charge.Failed'])).toEqual({ ok: false, error: '"Charge.Failed" is not a Stripe event name (such as charge.succeeded, or * for all)' });
    for (const bad of ['charge', 'charge.', '.charge', 'charge..failed', 'charge.*', 'charge succeeded']) expect(adapter.checkEvents([bad]).ok).toBe(false);
  });

  it('runs subscribed events (all with *), ignores the others and deliveries without a type', () => {
    expect(adapter.classify('charge.succeeded', ['charge.succeeded'])).toBe('run');
    expect(adapter.classify('invoice.paid', ['charge.succeeded'])).toBe('ignore');
    expect(adapter.classify('invoice.paid', ['*'])).toBe('run');
    expect(adapter.classify(null, ['*'])).toBe('ignore');
  });
});
