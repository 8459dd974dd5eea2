import { SecretBox } from '@runline/runtime';

/** What the callback needs to finish the sign-in the login started. */
export interface PendingSignIn {
  codeVerifier: string;
  state: string;
  nonce: string;
}

export const LOGIN_COOKIE_NAME = 'runline_oidc_login';

/** Long enough to type a password and pass a second factor at the provider. */
export const LOGIN_COOKIE_TTL_SECONDS = 600;

interface SealedContent extends PendingSignIn {
  /** Expiry, ms since the epoch: the seal covers it, so it cannot be extended. */
  expiresAt: number;
}

/**
 * The sign-in's PKCE verifier, state and nonce travel in a cookie sealed with AES-256-GCM (a key
 * derived from SECRETS_KEY for this use only), so no session store is needed and any gateway
 * replica can finish a sign-in another one started. Tampering breaks the seal; the expiry
 * inside it bounds its life whatever the browser does with Max-Age.
 */
export class LoginCookie {
  private readonly box: SecretBox;

  constructor(
    secretsKey: string,
    /** The cookie's Path: PUBLIC_BASE_URL's path + `/console/oidc`. */
    private readonly path: string,
    /** `Secure` when the console is served over https. */
    private readonly secure: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.box = new SecretBox(`console-oidc-login-cookie:${secretsKey}`);
  }

  /** The Set-Cookie value that starts a sign-in. */
  issue(pending: PendingSignIn): string {
    const content: SealedContent = { ...pending, expiresAt: this.now() + LOGIN_COOKIE_TTL_SECONDS * 1000 };
    return this.serialize(this.box.seal(JSON.stringify(content)), LOGIN_COOKIE_TTL_SECONDS);
  }

  /** The Set-Cookie value that removes it (once used, or on an error). */
  clear(): string {
    return this.serialize('', 0);
  }

  /** The pending sign-in in a Cookie header; undefined when absent, tampered with or expired. */
  read(cookieHeader: string | undefined): PendingSignIn | undefined {
    const sealed = cookieValue(cookieHeader, LOGIN_COOKIE_NAME);
    if (sealed === undefined || sealed === '') return undefined;
    let content: unknown;
    try {
      content = JSON.parse(this.box.open(sealed));
    } catch {
      return undefined;
    }
    if (!isSealedContent(content) || content.expiresAt <= this.now()) return undefined;
    return { codeVerifier: content.codeVerifier, state: content.state, nonce: content.nonce };
  }

  private serialize(value: string, maxAgeSeconds: number): string {
    const attributes = [`${LOGIN_COOKIE_NAME}=${value}`, `Path=${this.path}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax'];
    if (this.secure) attributes.push('Secure');
    return attributes.join('; ');
  }
}

/** One cookie's value from a Cookie header (`a=1; b=2`). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator === -1) continue;
    if (pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

function isSealedContent(value: unknown): value is SealedContent {
  if (typeof value !== 'object' || value === null) return false;
  const content = value as Record<string, unknown>;
  return (
    typeof content.codeVerifier === 'string' &&
    typeof content.state === 'string' &&
    typeof content.nonce === 'string' &&
    typeof content.expiresAt === 'number'
  );
}
