import { SecretBox } from '@runline/runtime';
import { LoginCookie } from './login-cookie.js';

const KEY = 'a-secrets-key-for-the-tests-0123';
const pending = { codeVerifier: 'verifier-0123456789', state: 'state-0123456789', nonce: 'nonce-0123456789' };

function cookieHeaderOf(setCookie: string): string {
  return setCookie.split(';')[0]!;
}

describe('LoginCookie', () => {
  it('seals the pending sign-in into an HttpOnly, SameSite=Lax cookie limited to the sign-in path, and reads it back', () => {
    const cookie = new LoginCookie(KEY, '/console/oidc', false);
    const setCookie = cookie.issue(pending);
    expect(setCookie).toMatch(/^runline_oidc_login=v1\.[A-Za-z0-9_.-]+; Path=\/console\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    for (const value of Object.values(pending)) expect(setCookie).not.toContain(value);
    expect(cookie.read(`other=1; ${cookieHeaderOf(setCookie)}; more=2`)).toEqual(pending);
  });

  it('is Secure when the console is served over https, and clears with Max-Age=0', () => {
    const cookie = new LoginCookie(KEY, '/base/console/oidc', true);
    expect(cookie.issue(pending)).toMatch(/; Path=\/base\/console\/oidc; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    expect(cookie.clear()).toBe('runline_oidc_login=; Path=/base/console/oidc; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
  });

  it('reads nothing from a missing, altered, foreign-key or expired cookie', () => {
    let now = 1_000_000;
    const cookie = new LoginCookie(KEY, '/console/oidc', false, () => now);
    const header = cookieHeaderOf(cookie.issue(pending));
    expect(cookie.read(undefined)).toBeUndefined();
    expect(cookie.read('unrelated=1')).toBeUndefined();
    expect(cookie.read(`${header.slice(0, -2)}${header.endsWith('AA') ? 'BB' : 'AA'}`)).toBeUndefined();
    expect(new LoginCookie('another-secrets-key-0123456789', '/console/oidc', false, () => now).read(header)).toBeUndefined();
    // Its key is derived for this use: the SecretBox of callback secrets (same SECRETS_KEY) cannot open it.
    expect(() => new SecretBox(KEY).open(header.slice('runline_oidc_login='.length))).toThrow();
    now += 600_000 - 1;
    expect(cookie.read(header)).toEqual(pending);
    now += 1;
    expect(cookie.read(header)).toBeUndefined();
  });
});
