import { ConfigError, loadConfig } from '@runline/runtime';
import { allowedCidrs, CallbackConfig } from './config.js';

describe('CallbackConfig', () => {
  const key = { SECRETS_KEY: 'a-secrets-key-of-16+' };

  it('has defaults and reads OUTBOUND_ALLOWED_CIDRS', () => {
    const config = loadConfig(CallbackConfig, { ...key, OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' });
    expect(config).toMatchObject({ CALLBACK_LEASE_MS: 30_000, CALLBACK_SWEEP_INTERVAL_MS: 1000, CALLBACK_CONCURRENCY: 512 });
    expect(allowedCidrs(config)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(allowedCidrs(loadConfig(CallbackConfig, key))).toEqual([]);
  });

  it('fails at boot naming each bad variable', () => {
    const load = () =>
      loadConfig(CallbackConfig, { SECRETS_KEY: 'short', OUTBOUND_ALLOWED_CIDRS: '127.0.0.1', CALLBACK_LEASE_MS: '5000', CALLBACK_CONCURRENCY: '0' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/SECRETS_KEY.*OUTBOUND_ALLOWED_CIDRS.*CALLBACK_LEASE_MS.*CALLBACK_CONCURRENCY/);
  });
});
