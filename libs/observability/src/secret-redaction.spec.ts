import { REDACTED, redactSecrets, secretPathsOf } from './secret-redaction.js';

describe('redactSecrets', () => {
  it('hides fields named like secrets, at any depth', () => {
    const redacted = redactSecrets({
      webhookSecret: 's3cret',
      webhookUrl: 'https://example.com/hook',
      payload: {
        customerId: 'c-1',
        password: 'hunter2',
        apiKey: 'k',
        api_key: 'k',
        'x-api-key': 'k',
        accessToken: 't',
        client_secret: 'cs',
        nested: [{ Authorization: 'anything', cookie: 'c', privateKey: 'pk', keep: 1 }],
      },
    });
    expect(redacted).toEqual({
      webhookSecret: REDACTED,
      webhookUrl: 'https://example.com/hook',
      payload: {
        customerId: 'c-1',
        password: REDACTED,
        apiKey: REDACTED,
        api_key: REDACTED,
        'x-api-key': REDACTED,
        accessToken: REDACTED,
        client_secret: REDACTED,
        nested: [{ Authorization: REDACTED, cookie: REDACTED, privateKey: REDACTED, keep: 1 }],
      },
    });
  });

  it('hides credential-looking values under any name', () => {
    expect(
      redactSecrets({ header: 'Bearer abc.def', basic: 'Basic dXNlcjpwYXNz', note: 'use rl_ext_AbCdEfGhIjKlMnOpQrStUv here', plain: 'hello' }),
    ).toEqual({ header: REDACTED, basic: REDACTED, note: REDACTED, plain: 'hello' });
  });

  it('keeps empty and null secret fields as they are, so their absence stays visible', () => {
    expect(redactSecrets({ webhookSecret: null, token: '' })).toEqual({ webhookSecret: null, token: '' });
  });

  it('does not change its input', () => {
    const input = { secret: 'x', list: [{ token: 'y' }] };
    redactSecrets(input);
    expect(input).toEqual({ secret: 'x', list: [{ token: 'y' }] });
  });

  it('passes scalars and arrays through', () => {
    expect(redactSecrets(42)).toBe(42);
    expect(redactSecrets(null)).toBeNull();
    expect(redactSecrets(['a', { secretAnswer: 1 }])).toEqual(['a', { secretAnswer: REDACTED }]);
  });
});

describe('secretPathsOf', () => {
  it('names every place redactSecrets would hide, and nothing else', () => {
    const document = {
      event: 'order',
      webhookSecret: 's3cret',
      payload: { items: [{ apiKey: 'k', sku: 'a' }], 'x-api-key': 'k', note: 'Bearer abc.def', empty: { token: '' } },
    };
    expect(secretPathsOf(document, 'body')).toEqual(['body.webhookSecret', 'body.payload.items[0].apiKey', 'body.payload["x-api-key"]', 'body.payload.note']);
    expect(redactSecrets(document)).toEqual({
      event: 'order',
      webhookSecret: REDACTED,
      payload: { items: [{ apiKey: REDACTED, sku: 'a' }], 'x-api-key': REDACTED, note: REDACTED, empty: { token: '' } },
    });
  });

  it('finds nothing in a document without secrets, and allows empty or null secret fields', () => {
    expect(secretPathsOf({ event: 'e', customerId: 'c', webhookSecret: '', callback: { secret: null } })).toEqual([]);
  });

  it('reports a document nested too deeply to check', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 70; i++) deep = { a: deep };
    expect(secretPathsOf(deep)).toHaveLength(1);
  });
});
