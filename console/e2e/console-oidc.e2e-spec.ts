/// <reference lib="dom" />
import { createHash, X509Certificate } from 'node:crypto';
import {
  consoleJwt,
  createTestDatabase,
  deletePrefixedStreams,
  HttpClient,
  TEST_CONSOLE_JWT_SECRET,
  TEST_SECRETS_KEY,
  testNatsUrl,
  uniqueBusPrefix,
  type TestDatabase,
} from '@runline/testing';
import { chromium, type Browser } from 'playwright-core';
import { startOidcProvider, type LocalOidcProvider } from '../../e2e/support/oidc-provider.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from '../../e2e/support/processes.js';
import { CHROMIUM_ARGS, launchChromium, openConsolePage, seriousViolations } from './support/console-browser.js';

/**
 * Chromium trusts the local provider's self-signed certificate by its public key alone
 * (`--ignore-certificate-errors-spki-list`), so every other certificate is still checked.
 */
function spkiPin(certificatePem: string): string {
  const spki = new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/**
 * Signing in to the console with an OpenID Connect provider, in Debian's Chromium: the sign-in
 * page offers the provider, the provider's own login and consent pages are filled in, the
 * console opens signed in as the mapped member, and signing out ends the provider's session too
 * (the next sign-in asks for the login again). A failed sign-in is shown on the sign-in page.
 */
describe('web console: sign-in with an OpenID Connect provider', () => {
  let database: TestDatabase;
  const busPrefix = uniqueBusPrefix();
  let provider: LocalOidcProvider;
  let gateway: RunningProcess;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({ redirectUris: [`${base}/console/oidc/callback`], postLogoutRedirectUris: [`${base}/console/`] });
    database = await createTestDatabase();
    const environment = {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: busPrefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: provider.caFile,
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: provider.clientId,
      CONSOLE_OIDC_CLIENT_SECRET: provider.clientSecret,
    };
    expect(await runNode(compiledEntry('services/gateway/main.js'), ['migrate'], environment).exit()).toBe(0);
    gateway = runNode(compiledEntry('services/gateway/main.js'), [], environment);
    await waitForOk(`${base}/health/ready`, gateway);
    await launchChromium().then((probe) => probe.close()); // the clear "chromium is missing" message
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${spkiPin(provider.ca)}`],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await provider?.close();
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
  });

  it('signs a member in through the provider, shows their organization, and signing out ends the provider session too', async () => {
    provider.addUser('dana');
    const owner = consoleJwt('oidc-browser-owner');
    const api = new HttpClient(base);
    const created = await api.post<{ orgId: string }>('/v1/orgs', { name: 'Dana’s team' }, { bearer: owner });
    expect(created.status).toBe(201);
    expect((await api.post(`/v1/orgs/${created.body.orgId}/members`, { userId: 'dana', role: 'EDITOR' }, { bearer: owner })).status).toBe(201);

    const { page, errors, close } = await openConsolePage(browser);
    try {
      await page.goto(`${base}/console/`);
      const offer = page.getByRole('link', { name: 'Sign in with your identity provider' });
      await offer.waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await offer.click();

      // The provider's own pages (oidc-provider's development login and consent).
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.locator('input[name="login"]').fill('dana');
      await page.locator('input[name="password"]').fill('any password');
      await page.locator('button[type="submit"]').click();
      await page.getByRole('button', { name: 'Continue' }).click();

      // Back at the console, signed in as the mapped member, the token already gone from the address.
      await page.getByRole('heading', { level: 1, name: 'Organizations and projects' }).waitFor();
      await page.getByText('Dana’s team').first().waitFor();
      expect(new URL(page.url()).hash).toBe('');
      await page.getByText('dana', { exact: true }).first().waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      // The provider asks to confirm its own sign-out, then sends the browser back to the console.
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.locator('button[name="logout"]').click();
      await page.waitForURL(`${base}/console/**`);
      await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
      // The provider's session ended: it asks for the login again instead of signing straight back in.
      await page.locator('input[name="login"]').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows why a sign-in failed on the sign-in page', async () => {
    const { page, close } = await openConsolePage(browser);
    try {
      // A callback that was not started in this browser: the gateway sends #signin-error=…
      await page.goto(`${base}/console/oidc/callback?code=forged&state=forged`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.getByText('The sign-in expired or was not started here; please try again').waitFor();
      expect(new URL(page.url()).hash).toBe('');
    } finally {
      await close();
    }
  });
});
