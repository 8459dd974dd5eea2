import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { gatewayService } from '@runline/gateway-service';
import {
  consoleJwt,
  createTestDatabase,
  deletePrefixedStreams,
  HttpClient,
  startTestSystem,
  TEST_CONSOLE_JWT_SECRET,
  TEST_SECRETS_KEY,
  testNatsUrl,
  uniqueBusPrefix,
  type TestDatabase,
  type TestSystem,
} from '@runline/testing';
import jwt from 'jsonwebtoken';
import { startOidcProvider, type LocalOidcProvider } from './support/oidc-provider.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';

const SIGN_IN_ERRORS = {
  expired: 'The sign-in expired or was not started here; please try again',
  unreachable: 'The sign-in provider could not be reached; please try again later',
  noUser: 'The sign-in provider did not name the user',
  refused: 'The sign-in provider refused the sign-in (access_denied)',
};

/**
 * Signing in to the web console with a real OpenID Connect provider (oidc-provider over HTTPS
 * on loopback), walked like a browser: each redirect followed by hand, cookies kept per host
 * and path, the provider's forms filled in. Two gateway processes: one maps users by `sub`
 * (the default), the other by verified `email`.
 */
describe('console sign-in with OpenID Connect', () => {
  let database: TestDatabase;
  const busPrefix = uniqueBusPrefix();
  let provider: LocalOidcProvider;
  let base: string;
  let emailBase: string;
  let environment: NodeJS.ProcessEnv;
  const gateways: RunningProcess[] = [];
  /** Everything that must never reach a log line, collected as the tests see it. */
  const secrets: string[] = [];

  beforeAll(async () => {
    const [port, emailPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    emailBase = `http://127.0.0.1:${emailPort}`;
    provider = await startOidcProvider({
      redirectUris: [`${base}/console/oidc/callback`, `${emailBase}/console/oidc/callback`],
      postLogoutRedirectUris: [`${base}/console/`],
    });
    secrets.push(provider.clientSecret);
    database = await createTestDatabase();
    environment = {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: busPrefix,
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      // Every line, the request lines with their paths and headers included.
      LOG_LEVEL: 'debug',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: provider.caFile,
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: provider.clientId,
      CONSOLE_OIDC_CLIENT_SECRET: provider.clientSecret,
    };
    const migration = runNode(compiledEntry('services/gateway/main.js'), ['migrate'], environment);
    expect(await migration.exit()).toBe(0);
    for (const [gatewayPort, extra] of [
      [port, { PUBLIC_BASE_URL: base }],
      [emailPort, { PUBLIC_BASE_URL: emailBase, CONSOLE_OIDC_USER_CLAIM: 'email' }],
    ] as const) {
      const started = runNode(compiledEntry('services/gateway/main.js'), [], { ...environment, ...extra, PORT: String(gatewayPort) });
      gateways.push(started);
      await waitForOk(`http://127.0.0.1:${gatewayPort}/health/ready`, started);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await provider?.close();
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
  });

  /** An organization owned by someone else, with `userId` made a VIEWER of it. */
  async function organizationWithMember(gatewayUrl: string, userId: string): Promise<{ orgId: string; name: string }> {
    const api = new HttpClient(gatewayUrl);
    const owner = consoleJwt(`owner-of-${userId}`);
    const name = `Org of ${userId}`;
    const created = await api.post<{ orgId: string }>('/v1/orgs', { name }, { bearer: owner });
    expect(created.status).toBe(201);
    const added = await api.post(`/v1/orgs/${created.body.orgId}/members`, { userId, role: 'VIEWER' }, { bearer: owner });
    expect(added.status).toBe(201);
    return { orgId: created.body.orgId, name };
  }

  async function organizationsOf(gatewayUrl: string, token: string): Promise<unknown> {
    const answer = await new HttpClient(gatewayUrl).get<{ data: unknown[] }>('/v1/orgs', { bearer: token });
    expect(answer.status).toBe(200);
    return answer.body.data;
  }

  function tokenIn(location: string, gatewayUrl: string): string {
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${gatewayUrl}/console/`);
    // In the fragment, never the query string.
    expect(url.search).toBe('');
    const fragment = new URLSearchParams(url.hash.slice(1));
    const token = fragment.get('token');
    expect(token).toEqual(expect.any(String));
    secrets.push(token!);
    return token!;
  }

  function signInErrorIn(location: string, gatewayUrl: string): string | null {
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}${url.search}`).toBe(`${gatewayUrl}/console/`);
    return new URLSearchParams(url.hash.slice(1)).get('signin-error');
  }

  it('GET /console/config.json says {"oidc": true}, without a credential', async () => {
    const answer = await fetch(`${base}/console/config.json`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({ oidc: true });
  });

  it('signs a member in: PKCE (S256), state and nonce at the provider, a sealed one-use cookie, then /console/#token=<console JWT> that reads their organizations', async () => {
    provider.addUser('ana');
    const organization = await organizationWithMember(base, 'ana');
    const browser = new Browser(provider.ca);

    const login = await browser.get(`${base}/console/oidc/login`);
    expect(login.status).toBe(302);
    const authorization = new URL(login.location!);
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(authorization.searchParams)).toEqual({
      client_id: provider.clientId,
      response_type: 'code',
      redirect_uri: `${base}/console/oidc/callback`,
      scope: 'openid email profile',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const cookie = login.setCookies.find((line) => line.startsWith('runline_oidc_login='))!;
    expect(cookie).toMatch(/^runline_oidc_login=v1\.[^;]+; Path=\/console\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    secrets.push(cookie.slice('runline_oidc_login='.length, cookie.indexOf(';')));
    // Neither the verifier, the state nor the nonce can be read in the cookie.
    expect(cookie).not.toContain(authorization.searchParams.get('state'));
    expect(cookie).not.toContain(authorization.searchParams.get('nonce'));

    const walk = await browser.walk(login.location!, { login: 'ana', stopAt: `${base}/console/oidc/callback` });
    expect(walk.loginFormShown).toBe(true);
    secrets.push(new URL(walk.location).searchParams.get('code')!);
    expect(browser.cookieFor(walk.location, 'runline_oidc_login')).toBeDefined();

    const callback = await browser.get(walk.location);
    expect(callback.status).toBe(302);
    expect(callback.headers['cache-control']).toBe('no-store');
    // One use: the callback drops the cookie whatever its outcome.
    expect(callback.setCookies).toContain('runline_oidc_login=; Path=/console/oidc; Max-Age=0; HttpOnly; SameSite=Lax');
    expect(browser.cookieFor(walk.location, 'runline_oidc_login')).toBeUndefined();

    const token = tokenIn(callback.location!, base);
    const claims = jwt.verify(token, TEST_CONSOLE_JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims.sub).toBe('ana');
    expect(claims.roles).toBeUndefined();
    expect(claims.exp! - claims.iat!).toBe(8 * 60 * 60);
    expect(await organizationsOf(base, token)).toEqual([{ orgId: organization.orgId, name: organization.name, role: 'VIEWER' }]);
    // The gateway discovered the provider, exchanged the code and checked the ID token's signature against its keys.
    expect(provider.requests).toEqual(expect.arrayContaining(['GET /.well-known/openid-configuration', 'POST /token', 'GET /jwks']));

    // The code was spent: the same callback again (the cookie gone) is refused.
    const again = await browser.get(walk.location);
    expect(signInErrorIn(again.location!, base)).toBe(SIGN_IN_ERRORS.expired);
  });

  it('signs in a user who is no member: their console token sees no organizations', async () => {
    provider.addUser('bob');
    await organizationWithMember(base, 'someone-else');
    const browser = new Browser(provider.ca);
    const end = await browser.walk(`${base}/console/oidc/login`, { login: 'bob' });
    const token = tokenIn(end.location, base);
    expect(jwt.decode(token)).toMatchObject({ sub: 'bob' });
    expect(await organizationsOf(base, token)).toEqual([]);
  });

  it('with CONSOLE_OIDC_USER_CLAIM=email maps a user by their verified address, from the userinfo endpoint; an unverified one is refused', async () => {
    provider.addUser('carol-1234', { email: 'carol@example.com', email_verified: true });
    const organization = await organizationWithMember(emailBase, 'carol@example.com');
    const end = await new Browser(provider.ca).walk(`${emailBase}/console/oidc/login`, { login: 'carol-1234' });
    const token = tokenIn(end.location, emailBase);
    expect(jwt.decode(token)).toMatchObject({ sub: 'carol@example.com' });
    expect(await organizationsOf(emailBase, token)).toEqual([{ orgId: organization.orgId, name: organization.name, role: 'VIEWER' }]);
    // The ID token of the code flow carries no email here: it came from the userinfo endpoint.
    expect(provider.requests).toContain('GET /me');

    provider.addUser('mallory', { email: 'carol@example.com', email_verified: false });
    const refused = await new Browser(provider.ca).walk(`${emailBase}/console/oidc/login`, { login: 'mallory' });
    expect(signInErrorIn(refused.location, emailBase)).toBe(SIGN_IN_ERRORS.noUser);
  });

  it('refuses a callback whose state is not the one its cookie holds, or that comes without the cookie', async () => {
    provider.addUser('erin');
    const browser = new Browser(provider.ca);
    const walk = await browser.walk(`${base}/console/oidc/login`, { login: 'erin', stopAt: `${base}/console/oidc/callback` });
    secrets.push(new URL(walk.location).searchParams.get('code')!);

    // Another browser (a forged link: login CSRF) has no cookie.
    const elsewhere = await new Browser(provider.ca).get(walk.location);
    expect(elsewhere.status).toBe(302);
    expect(signInErrorIn(elsewhere.location!, base)).toBe(SIGN_IN_ERRORS.expired);

    const wrongState = new URL(walk.location);
    wrongState.searchParams.set('state', 'not-the-state-the-sign-in-started-with');
    const refused = await browser.get(wrongState.href);
    expect(refused.status).toBe(302);
    expect(signInErrorIn(refused.location!, base)).toBe(SIGN_IN_ERRORS.expired);
  });

  it('refuses a tampered cookie, even with the right state and a valid code', async () => {
    provider.addUser('frank');
    const browser = new Browser(provider.ca);
    const walk = await browser.walk(`${base}/console/oidc/login`, { login: 'frank', stopAt: `${base}/console/oidc/callback` });
    secrets.push(new URL(walk.location).searchParams.get('code')!);
    const sealed = browser.cookieFor(walk.location, 'runline_oidc_login')!;
    // The first character of the last base64 part: all six of its bits are the sealed bytes'.
    // (The last character's low bits may be padding that decoding ignores, so changing it
    // sometimes changed nothing, and the sign-in rightly went through.)
    const at = sealed.lastIndexOf('.') + 1;
    const changed = sealed[at] === 'A' ? 'B' : 'A';
    browser.setCookie(walk.location, 'runline_oidc_login', `${sealed.slice(0, at)}${changed}${sealed.slice(at + 1)}`);

    const refused = await browser.get(walk.location);
    expect(refused.status).toBe(302);
    expect(signInErrorIn(refused.location!, base)).toBe(SIGN_IN_ERRORS.expired);
  });

  it("answers the provider's error clearly: the user aborts at the provider, the console gets #signin-error", async () => {
    const browser = new Browser(provider.ca);
    const walk = await browser.walk(`${base}/console/oidc/login`, { abortAtLogin: true });
    expect(signInErrorIn(walk.location, base)).toBe(SIGN_IN_ERRORS.refused);
  });

  it('signs out at the provider: /console/oidc/logout ends the provider session and comes back to /console/, so the next sign-in asks for the login again', async () => {
    provider.addUser('gina');
    const browser = new Browser(provider.ca);
    const first = await browser.walk(`${base}/console/oidc/login`, { login: 'gina' });
    tokenIn(first.location, base);
    // Still signed in at the provider: no login form the second time.
    const second = await browser.walk(`${base}/console/oidc/login`, { login: 'gina' });
    expect(second.loginFormShown).toBe(false);
    tokenIn(second.location, base);

    const logout = await browser.get(`${base}/console/oidc/logout`);
    expect(logout.status).toBe(302);
    const endSession = new URL(logout.location!);
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${provider.issuer}/session/end`);
    expect(endSession.searchParams.get('client_id')).toBe(provider.clientId);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${base}/console/`);
    const back = await browser.walk(logout.location!, { confirmLogout: true });
    expect(back.location).toBe(`${base}/console/`);

    const third = await browser.walk(`${base}/console/oidc/login`, { login: 'gina' });
    expect(third.loginFormShown).toBe(true);
    tokenIn(third.location, base);
  });

  it('does not start when only some of the variables are set, naming what is missing', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ CONSOLE_OIDC_CLIENT_ID: undefined, CONSOLE_OIDC_CLIENT_SECRET: undefined, PUBLIC_BASE_URL: base }, /CONSOLE_OIDC_CLIENT_ID: CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together/],
      [{ CONSOLE_OIDC_ISSUER: undefined, PUBLIC_BASE_URL: base }, /CONSOLE_OIDC_ISSUER: CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together/],
      [{}, /PUBLIC_BASE_URL: PUBLIC_BASE_URL must be set when CONSOLE_OIDC_ISSUER is/],
      [
        { PUBLIC_BASE_URL: base, CONSOLE_JWT_SECRET: undefined, CONSOLE_JWT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
        /CONSOLE_JWT_SECRET: CONSOLE_JWT_SECRET must be set when CONSOLE_OIDC_ISSUER is/,
      ],
      [{ PUBLIC_BASE_URL: base, CONSOLE_OIDC_ISSUER: base }, /CONSOLE_OIDC_ISSUER must be an https URL/],
    ];
    for (const [changes, message] of cases) {
      const started = runNode(compiledEntry('services/gateway/main.js'), [], { ...environment, ...changes, PORT: String(await freePort()) });
      expect(await started.exit()).toBe(1);
      expect(started.output()).toMatch(message);
      expect(started.output()).not.toContain(provider.clientSecret);
    }
  }, 120_000);

  it('never writes a token, a code, the sealed cookie or the client secret to its log', () => {
    expect(secrets.length).toBeGreaterThan(8);
    const logs = gateways.map((gateway) => gateway.output()).join('\n');
    // Not vacuous: the request lines of the sign-in routes are there.
    expect(logs).toContain('/console/oidc/callback');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});

describe('console sign-in, off or cut off', () => {
  let off: TestSystem;
  let unreachable: TestSystem;
  let provider: LocalOidcProvider;

  beforeAll(async () => {
    provider = await startOidcProvider({ redirectUris: ['http://127.0.0.1:9/console/oidc/callback'] });
    off = await startTestSystem([gatewayService]);
    // Without OUTBOUND_ALLOWED_CIDRS the outbound guard refuses the loopback provider.
    unreachable = await startTestSystem([gatewayService], {
      environment: {
        OUTBOUND_ALLOWED_CIDRS: '',
        PUBLIC_BASE_URL: 'https://console.example.test',
        CONSOLE_OIDC_ISSUER: provider.issuer,
        CONSOLE_OIDC_CLIENT_ID: provider.clientId,
        CONSOLE_OIDC_CLIENT_SECRET: provider.clientSecret,
      },
    });
  }, 60_000);

  afterAll(async () => {
    await off?.stop();
    await unreachable?.stop();
    await provider?.close();
  });

  it('without CONSOLE_OIDC_* config.json says {"oidc": false} and the sign-in routes answer 404', async () => {
    const config = await fetch(`${off.url('gateway')}/console/config.json`);
    expect(config.status).toBe(200);
    expect(await config.json()).toEqual({ oidc: false });
    for (const route of ['login', 'callback', 'logout']) {
      const answer = await fetch(`${off.url('gateway')}/console/oidc/${route}`, { redirect: 'manual' });
      expect(answer.status).toBe(404);
    }
  });

  it('reaches the provider only through the outbound guard: a refused address ends the sign-in with a clear error', async () => {
    const answer = await fetch(`${unreachable.url('gateway')}/console/oidc/login`, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe(`https://console.example.test/console/#signin-error=${encodeURIComponent(SIGN_IN_ERRORS.unreachable)}`);
    expect(answer.headers.get('set-cookie')).toBeNull();
  });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  location?: string;
  setCookies: string[];
  body: string;
}

interface StoredCookie {
  host: string;
  path: string;
  name: string;
  value: string;
}

/**
 * Just enough of a browser: cookies per host and path (set, replaced, expired by Max-Age), no
 * redirect followed unless asked, HTML forms posted as application/x-www-form-urlencoded.
 */
class Browser {
  private cookies: StoredCookie[] = [];

  constructor(private readonly ca: string) {}

  get(url: string): Promise<Answer> {
    return this.request('GET', url);
  }

  cookieFor(url: string, name: string): string | undefined {
    const { host, pathname } = new URL(url);
    return this.cookies.find((cookie) => cookie.host === host && cookie.name === name && pathname.startsWith(cookie.path))?.value;
  }

  setCookie(url: string, name: string, value: string): void {
    const { host, pathname } = new URL(url);
    const cookie = this.cookies.find((stored) => stored.host === host && stored.name === name && pathname.startsWith(stored.path))!;
    cookie.value = value;
  }

  /**
   * Follows redirects and fills the provider's forms (login with any password, consent, logout
   * confirmation) until a redirect leaves for `stopAt`, or for the console's page (`/console/`).
   */
  async walk(start: string, options: { login?: string; stopAt?: string; abortAtLogin?: boolean; confirmLogout?: boolean }): Promise<{ location: string; loginFormShown: boolean }> {
    let url = start;
    let answer = await this.get(url);
    let loginFormShown = false;
    for (let step = 0; step < 20; step += 1) {
      if (answer.status === 302 || answer.status === 303) {
        const next = new URL(answer.location!, url).href;
        if (options.stopAt !== undefined && next.startsWith(options.stopAt)) return { location: next, loginFormShown };
        if (/\/console\/(#.*)?$/.test(new URL(next).pathname + new URL(next).hash)) return { location: next, loginFormShown };
        url = next;
        answer = await this.get(url);
        continue;
      }
      expect(answer.status).toBe(200);
      const form = parseForm(answer.body);
      if (form.fields.prompt === 'login') {
        loginFormShown = true;
        if (options.abortAtLogin) {
          url = `${url}/abort`;
          answer = await this.get(url);
          continue;
        }
        Object.assign(form.fields, { login: options.login!, password: 'any password will do' });
      }
      if (form.fields.xsrf !== undefined && options.confirmLogout) form.fields.logout = 'yes';
      url = new URL(form.action, url).href;
      answer = await this.request('POST', url, new URLSearchParams(form.fields).toString());
    }
    throw new Error(`no end after 20 steps, at ${url}`);
  }

  private async request(method: string, url: string, form?: string): Promise<Answer> {
    const target = new URL(url);
    const cookies = this.cookies.filter((cookie) => cookie.host === target.host && target.pathname.startsWith(cookie.path));
    const headers: Record<string, string> = { accept: 'text/html' };
    if (cookies.length > 0) headers.cookie = cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const answer = await new Promise<Answer>((resolve, reject) => {
      const options = { method, headers, ...(target.protocol === 'https:' ? { ca: this.ca } : {}) };
      const request = (target.protocol === 'https:' ? https : http).request(target, options, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, location: response.headers.location, setCookies: response.headers['set-cookie'] ?? [], body }),
        );
      });
      request.on('error', reject);
      request.end(form);
    });
    for (const line of answer.setCookies) this.store(target, line);
    return answer;
  }

  private store(target: URL, line: string): void {
    const [pair, ...attributes] = line.split(';').map((part) => part.trim());
    const separator = pair!.indexOf('=');
    const name = pair!.slice(0, separator);
    const value = pair!.slice(separator + 1);
    const attribute = (key: string) => attributes.find((part) => part.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
    const path = attribute('path') ?? target.pathname.replace(/\/[^/]*$/, '/');
    const maxAge = attribute('max-age');
    const expires = attribute('expires');
    const expired = (maxAge !== undefined && Number(maxAge) <= 0) || (expires !== undefined && Date.parse(expires) <= Date.now());
    this.cookies = this.cookies.filter((cookie) => !(cookie.host === target.host && cookie.path === path && cookie.name === name));
    if (!expired) this.cookies.push({ host: target.host, path, name, value });
  }
}

/** The page's first form: its action and its named inputs with their values. */
function parseForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no form in:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(input[0])?.[1];
    if (name !== undefined) fields[name] = unescapeHtml(/value="([^"]*)"/.exec(input[0])?.[1] ?? '');
  }
  return { action: unescapeHtml(form[1]!), fields };
}

function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;|&#x27;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
