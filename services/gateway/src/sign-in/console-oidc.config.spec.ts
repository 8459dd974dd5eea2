import { loadConfig } from '@runline/runtime';
import { ConsoleOidcConfig } from './console-oidc.config.js';

const BASE = { SECRETS_KEY: 'a-secrets-key-for-the-tests-0123', CONSOLE_JWT_SECRET: 'a-console-jwt-secret-0123' };
const OIDC = {
  CONSOLE_OIDC_ISSUER: 'https://id.example.com/realms/runline',
  CONSOLE_OIDC_CLIENT_ID: 'runline-console',
  CONSOLE_OIDC_CLIENT_SECRET: 'client-secret',
  PUBLIC_BASE_URL: 'https://runline.example.com',
};

describe('ConsoleOidcConfig', () => {
  it('is off without the CONSOLE_OIDC_* variables', () => {
    const config = loadConfig(ConsoleOidcConfig, BASE);
    expect(config.enabled).toBe(false);
  });

  it('is on with the three variables, PUBLIC_BASE_URL and a signing secret; maps by sub and asks for openid email profile by default', () => {
    const config = loadConfig(ConsoleOidcConfig, { ...BASE, ...OIDC });
    expect(config.enabled).toBe(true);
    expect(config.CONSOLE_OIDC_USER_CLAIM).toBe('sub');
    expect(config.CONSOLE_OIDC_SCOPES).toBe('openid email profile');
  });

  it.each([
    [{ CONSOLE_OIDC_ISSUER: undefined }, 'CONSOLE_OIDC_ISSUER: CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together'],
    [{ CONSOLE_OIDC_CLIENT_ID: undefined }, 'CONSOLE_OIDC_CLIENT_ID: CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together'],
    [{ CONSOLE_OIDC_CLIENT_SECRET: undefined }, 'CONSOLE_OIDC_CLIENT_SECRET: CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together'],
    [{ CONSOLE_OIDC_ISSUER: 'http://id.example.com' }, 'CONSOLE_OIDC_ISSUER: CONSOLE_OIDC_ISSUER must be an https URL without a query or fragment'],
    [{ PUBLIC_BASE_URL: undefined }, 'PUBLIC_BASE_URL: PUBLIC_BASE_URL must be set when CONSOLE_OIDC_ISSUER is'],
    [{ CONSOLE_JWT_SECRET: undefined }, 'CONSOLE_JWT_SECRET: CONSOLE_JWT_SECRET must be set when CONSOLE_OIDC_ISSUER is'],
    [{ CONSOLE_OIDC_SCOPES: 'email profile' }, 'CONSOLE_OIDC_SCOPES: CONSOLE_OIDC_SCOPES must include openid'],
    [{ CONSOLE_OIDC_USER_CLAIM: 'e mail' }, 'CONSOLE_OIDC_USER_CLAIM: CONSOLE_OIDC_USER_CLAIM must be a claim name'],
  ])('fails at boot naming the variable: %j', (changes, message) => {
    expect(() => loadConfig(ConsoleOidcConfig, { ...BASE, ...OIDC, ...changes })).toThrow(message);
  });
});
