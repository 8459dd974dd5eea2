import { parseShopifyCredentials } from './shopify-credentials.js';

const valid = { storeDomain: 'runline-test.myshopify.com', accessToken: 'shpat_0123456789abcdef', apiSecret: 'app-client-secret' };
const badDomain = "credentials.storeDomain must be the shop's domain, such as your-store.myshopify.com";

describe('parseShopifyCredentials', () => {
  it('takes {storeDomain, accessToken, apiSecret}, the domain lower-cased and without a final dot', () => {
    expect(parseShopifyCredentials(valid)).toEqual({ ok: true, credentials: valid });
    expect(parseShopifyCredentials({ ...valid, storeDomain: ' Runline-Test.MyShopify.com. ' })).toEqual({ ok: true, credentials: valid });
  });

  it.each(['shop.example.com', 'runline-test.myshopify.com:443', '127.0.0.1:8443', 'a.b'])('accepts the host %s', (storeDomain) => {
    expect(parseShopifyCredentials({ ...valid, storeDomain })).toMatchObject({ ok: true, credentials: { storeDomain } });
  });

  it.each([
    'https://runline-test.myshopify.com',
    'runline-test.myshopify.com/admin',
    'user@runline-test.myshopify.com',
    'localhost',
    'runline-test',
    '[::1]:443',
    'runline-test.myshopify.com:0',
    'runline-test.myshopify.com:65536',
    'runline-test.myshopify.com:',
    '-shop.myshopify.com',
    'shop-.myshopify.com',
    'shop..myshopify.com',
    'shop_1.myshopify.com',
    'shop.myshopify.com?x=1',
    'shop.myshopify.com#x',
    'shop.myshopify.com\nHost: evil.example',
    'shop .myshopify.com',
  ])('refuses the store domain %j', (storeDomain) => {
    expect(parseShopifyCredentials({ ...valid, storeDomain: storeDomain })).toEqual(
      storeDomain.trim() === '' ? { ok: false, error: 'credentials.storeDomain is required' } : { ok: false, error: badDomain },
    );
  });

  it.each(['storeDomain', 'accessToken', 'apiSecret'])('requires %s as a non-blank string', (name) => {
    const error = `credentials.${name} is required`;
    expect(parseShopifyCredentials({ ...valid, [name]: undefined })).toEqual({ ok: false, error });
    expect(parseShopifyCredentials({ ...valid, [name]: '  ' })).toEqual({ ok: false, error });
    expect(parseShopifyCredentials({ ...valid, [name]: 42 })).toEqual({ ok: false, error });
    expect(parseShopifyCredentials({ ...valid, [name]: 'x'.repeat(1001) })).toEqual({ ok: false, error: `credentials.${name} is too long` });
  });

  it.each([null, 'shpat_x', [], 7])('refuses %j as credentials', (input) => {
    expect(parseShopifyCredentials(input)).toEqual({ ok: false, error: 'credentials must be an object {storeDomain, accessToken, apiSecret}' });
  });
});
