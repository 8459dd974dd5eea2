import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { LOGGER } from '@runline/runtime';
import jwt from 'jsonwebtoken';
import * as oidc from 'openid-client';
import { ConsoleOidcConfig } from './console-oidc.config.js';
import { guardedFetch } from './guarded-fetch.js';
import { LoginCookie, type PendingSignIn } from './login-cookie.js';

/** How long a console JWT issued after an OpenID Connect sign-in is good for. */
export const CONSOLE_SESSION_SECONDS = 8 * 60 * 60;

/** Longest user id a membership takes (the `userId` of `POST /v1/orgs/{orgId}/members`). */
const MAX_USER_ID_LENGTH = 200;

/** What the console shows after `#signin-error=`; short, and never the provider's own text. */
export const SIGN_IN_ERRORS = {
  expired: 'The sign-in expired or was not started here; please try again',
  unreachable: 'The sign-in provider could not be reached; please try again later',
  failed: 'The sign-in provider did not confirm the sign-in; please try again',
  noUser: 'The sign-in provider did not name the user',
  refused: (code: string) => `The sign-in provider refused the sign-in (${code})`,
} as const;

/** A sign-in that cannot finish; `message` is one of SIGN_IN_ERRORS. */
export class SignInError extends Error {}

/** Only a registered-looking error code from the provider is repeated to the user. */
const PROVIDER_ERROR_CODE = /^[a-z_]{1,64}$/;

/**
 * Console sign-in with an OpenID Connect provider: the authorization code flow with PKCE
 * (S256), state and nonce, as a confidential client. The provider's metadata is discovered on
 * the first sign-in (so the gateway starts while the provider is down) and kept; a failed
 * discovery is tried again on the next sign-in.
 */
@Injectable()
export class ConsoleSignIn implements OnApplicationShutdown {
  private discovered: Promise<oidc.Configuration> | undefined;
  private readonly cookie: LoginCookie;
  private readonly base: URL;

  constructor(
    @Inject(ConsoleOidcConfig) private readonly config: ConsoleOidcConfig,
    @Inject(OutboundGuard) private readonly guard: OutboundGuard,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    // Unused when sign-in is off; a placeholder keeps the fields one shape.
    this.base = new URL(`${config.PUBLIC_BASE_URL ?? 'http://localhost'}/`);
    this.cookie = new LoginCookie(config.SECRETS_KEY, `${this.base.pathname}console/oidc`, this.base.protocol === 'https:');
  }

  onApplicationShutdown(): void {
    this.guard.close();
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /** `PUBLIC_BASE_URL` + `path` (path without its leading slash). */
  publicUrl(path: string): string {
    return new URL(path, this.base).href;
  }

  get redirectUri(): string {
    return this.publicUrl('console/oidc/callback');
  }

  /** Starts a sign-in: the provider's authorization URL and the cookie that lets the callback finish it. */
  async start(): Promise<{ location: string; setCookie: string }> {
    const configuration = await this.configuration();
    const pending: PendingSignIn = { codeVerifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
    const location = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: this.config.CONSOLE_OIDC_SCOPES,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { location: location.href, setCookie: this.cookie.issue(pending) };
  }

  /** The Set-Cookie value that drops the sign-in cookie. */
  clearCookie(): string {
    return this.cookie.clear();
  }

  /**
   * Finishes a sign-in from the provider's redirect: checks the state against the cookie,
   * exchanges the code (PKCE verifier, client secret), lets the library validate the ID token
   * (signature, issuer, audience, expiry, nonce), and answers a console JWT for the user.
   */
  async finish(query: Record<string, string | undefined>, cookieHeader: string | undefined): Promise<string> {
    if (query.error !== undefined) {
      const code = PROVIDER_ERROR_CODE.test(query.error) ? query.error : 'error';
      this.logger.info({ providerError: code }, 'console sign-in refused by the provider');
      throw new SignInError(SIGN_IN_ERRORS.refused(code));
    }
    const pending = this.cookie.read(cookieHeader);
    if (!pending || query.state !== pending.state || query.code === undefined) {
      this.logger.info({ cookie: pending ? 'valid' : 'missing, altered or expired', stateMatches: pending !== undefined && query.state === pending.state }, 'console sign-in callback refused');
      throw new SignInError(SIGN_IN_ERRORS.expired);
    }
    const configuration = await this.configuration();
    // The library takes the redirect URI from this URL, so it is the registered one whatever
    // address (proxy, replica) the browser's request reached.
    const callbackUrl = new URL(this.redirectUri);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) callbackUrl.searchParams.set(name, value);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      this.logger.warn({ reason: describe(error) }, 'console sign-in: the code exchange failed');
      throw new SignInError(SIGN_IN_ERRORS.failed);
    }
    const userId = await this.userIdOf(configuration, tokens);
    return jwt.sign({}, this.config.CONSOLE_JWT_SECRET!, { algorithm: 'HS256', subject: userId, expiresIn: CONSOLE_SESSION_SECONDS });
  }

  /** Where sign-out sends the browser: the provider's end-session endpoint when it has one, else the console. */
  async signOutLocation(): Promise<string> {
    const consoleUrl = this.publicUrl('console/');
    let configuration: oidc.Configuration;
    try {
      configuration = await this.configuration();
    } catch {
      return consoleUrl;
    }
    if (configuration.serverMetadata().end_session_endpoint === undefined) return consoleUrl;
    return oidc.buildEndSessionUrl(configuration, { client_id: this.config.CONSOLE_OIDC_CLIENT_ID!, post_logout_redirect_uri: consoleUrl }).href;
  }

  /**
   * The Runline user id: the configured claim, from the ID token or else from the userinfo
   * endpoint. An `email` is taken only when the provider says it is verified, or anyone who
   * can give an account someone else's address would sign in as them.
   */
  private async userIdOf(configuration: oidc.Configuration, tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>): Promise<string> {
    const claimName = this.config.CONSOLE_OIDC_USER_CLAIM;
    const idClaims = tokens.claims()!;
    let claims: Record<string, unknown> = idClaims;
    if (idClaims[claimName] === undefined && configuration.serverMetadata().userinfo_endpoint !== undefined) {
      try {
        claims = { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)), ...idClaims };
      } catch (error) {
        this.logger.warn({ reason: describe(error) }, 'console sign-in: the userinfo request failed');
        throw new SignInError(SIGN_IN_ERRORS.failed);
      }
    }
    const value = claims[claimName];
    const verified = claimName !== 'email' || claims.email_verified === true;
    if (typeof value !== 'string' || value === '' || value.length > MAX_USER_ID_LENGTH || !verified) {
      this.logger.warn({ claim: claimName, present: typeof value === 'string', verified }, 'console sign-in: no usable user id claim');
      throw new SignInError(SIGN_IN_ERRORS.noUser);
    }
    return value;
  }

  private configuration(): Promise<oidc.Configuration> {
    this.discovered ??= oidc
      .discovery(
        new URL(this.config.CONSOLE_OIDC_ISSUER!),
        this.config.CONSOLE_OIDC_CLIENT_ID!,
        undefined,
        // HTTP Basic: the method every provider must support for a client with a secret.
        oidc.ClientSecretBasic(this.config.CONSOLE_OIDC_CLIENT_SECRET!),
        // Non-repudiation: the ID token's signature is checked against the provider's JWKS too.
        { [oidc.customFetch]: guardedFetch(this.guard), execute: [oidc.enableNonRepudiationChecks] },
      )
      .catch((error: unknown) => {
        this.discovered = undefined;
        this.logger.warn({ reason: describe(error) }, 'console sign-in: the provider discovery failed');
        throw new SignInError(SIGN_IN_ERRORS.unreachable);
      });
    return this.discovered;
  }
}

/** An error's name, code and message, without its cause (which may hold a response body). */
function describe(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const { code, error: oauthError } = error as Error & { code?: unknown; error?: unknown };
  return { name: error.name, code, oauthError, message: error.message };
}
