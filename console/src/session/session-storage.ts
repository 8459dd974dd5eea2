/**
 * Where the console keeps the console JWT: sessionStorage. It lasts as long as the tab and is
 * gone when the tab closes, so a bearer token that cannot be revoked does not outlive the visit
 * on a shared computer; a new tab signs in again (the `#token=` link or a paste).
 */
const KEY = 'runline.console.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage refused (private mode quotas): the session then lasts as long as the page.
  }
}

/**
 * `#token=<JWT>` in the address: take the token and drop the fragment from the address bar
 * (and from history), so it is neither bookmarked nor shown over a shoulder. A fragment never
 * reaches a server, so no access log holds it.
 */
export function takeTokenFromFragment(): string | null {
  const match = /^#token=([^&]+)/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  return decodeURIComponent(match[1]!);
}

/**
 * `#signin-error=<message>`: where the gateway's OpenID Connect callback sends a sign-in that
 * failed. Taken like the token, so a reload does not show it again.
 */
export function takeSignInErrorFromFragment(): string | null {
  const match = /^#signin-error=([^&]+)/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  return decodeURIComponent(match[1]!);
}

const OIDC_KEY = 'runline.console.oidc';

/**
 * Whether this tab signed in through the identity provider: then signing out also ends the
 * provider's session (`/console/oidc/logout`), or the next "Sign in with your identity
 * provider" would sign the same person straight back in without asking.
 */
export function rememberOidcSignIn(used: boolean): void {
  try {
    if (used) sessionStorage.setItem(OIDC_KEY, '1');
    else sessionStorage.removeItem(OIDC_KEY);
  } catch {
    // Storage refused: sign-out then only forgets the token.
  }
}

export function signedInWithOidc(): boolean {
  try {
    return sessionStorage.getItem(OIDC_KEY) === '1';
  } catch {
    return false;
  }
}

export interface TokenClaims {
  sub?: string;
  exp?: number;
}

/** The JWT's claims, read without verifying (the gateway verifies); null when it is not a JWT. */
export function readClaims(token: string): TokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1]!.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as unknown;
    return claims && typeof claims === 'object' ? (claims as TokenClaims) : null;
  } catch {
    return null;
  }
}
