import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { selfSignedCertificate, type TestCertificate } from './https-receiver.js';

export interface LocalOidcProviderOptions {
  /** Redirect URIs of the one registered client (for Runline: `<PUBLIC_BASE_URL>/console/oidc/callback`). */
  redirectUris: string[];
  /** Where RP-initiated logout may send the browser back to (for Runline: `<PUBLIC_BASE_URL>/console/`). */
  postLogoutRedirectUris?: string[];
  /** The certificate to serve; one for 127.0.0.1 is made (and removed on close) otherwise. */
  certificate?: TestCertificate;
}

export interface LocalOidcProvider {
  /** `https://127.0.0.1:<port>`, the CONSOLE_OIDC_ISSUER. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The certificate authority to trust: NODE_EXTRA_CA_CERTS for a gateway process, or a browser's. */
  caFile: string;
  /** PEM of that certificate, for a client in the test's own process (an https `ca`). */
  ca: string;
  /** `METHOD path` of every request the provider received (no query string), oldest first. */
  requests: string[];
  /**
   * Makes an account that can sign in: its login is its `sub`, any password is accepted (the
   * provider's development login form). `claims` are released with the `email`/`profile` scopes.
   */
  addUser(login: string, claims?: { email?: string; email_verified?: boolean; name?: string }): void;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider) for tests, over HTTPS on 127.0.0.1: one
 * confidential client (client_secret_basic, authorization code, PKCE required), its development
 * login and consent forms, RP-initiated logout. Not for anything but tests.
 */
export async function startOidcProvider(options: LocalOidcProviderOptions): Promise<LocalOidcProvider> {
  const certificate = options.certificate ?? (await selfSignedCertificate());
  // The issuer names the port, so the provider is made once the server listens.
  let handle: RequestListener = (_request, response) => response.writeHead(503).end();
  const requests: string[] = [];
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
    requests.push(`${request.method} ${(request.url ?? '/').split('?')[0]}`);
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const clientId = `runline-console-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, Record<string, unknown>>();
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    findAccount: (_ctx, id) => {
      const claims = accounts.get(id);
      return claims === undefined ? undefined : { accountId: id, claims: () => ({ sub: id, ...claims }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  });
  handle = provider.callback();

  return {
    issuer,
    clientId,
    clientSecret,
    caFile: certificate.caFile,
    ca: certificate.cert,
    requests,
    addUser(login, claims = {}) {
      accounts.set(login, claims);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!options.certificate) await certificate.remove();
    },
  };
}
