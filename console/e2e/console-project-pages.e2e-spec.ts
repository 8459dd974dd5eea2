/// <reference lib="dom" />
// Code passed to page.evaluate runs in the browser and is typed against the DOM.
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { webhookService } from '@runline/webhook-service';
import type { Browser, Page } from 'playwright-core';
import { gotoSignedIn, launchChromium, openConsolePage, screenshot, seriousViolations, type ConsolePage, type Width } from './support/console-browser.js';
import { createAutomationProject, startRun, triggerToken, waitForRun, type ConsoleProject } from './support/console-fixtures.js';
import { deliverToHook, eventually, FAILING_AUTOMATION, FIXED_AUTOMATION, ItemsEndpoint, publish } from './support/project-pages-support.js';

const FINAL = (status: string) => ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(status);
const projectPage = (project: ConsoleProject, page: string) => `organizations/${project.orgId}/projects/${project.projectId}/${page}`;
const row = (page: Page, text: string | RegExp) => page.locator('tbody tr').filter({ hasText: text });
const shownOnce = (page: Page) => page.getByTestId('shown-once-value');

/**
 * The console's project configuration pages in Debian's Chromium, against the started
 * gateway, invocation, scheduler, polling, dead-letter and webhook services on real
 * PostgreSQL and NATS: a token made in the page starts runs over HTTP; a dead letter is
 * replayed (one, then the rest in bulk after a dry-run count) once the definition is fixed;
 * a hook made in the page takes a signed delivery that runs; a setting changed in the page is
 * obeyed by the next call; templates feed the request example builder; polling triggers and
 * provider subscriptions are listed and managed. Every page passes axe and is photographed at
 * both widths.
 */
describe('web console: dead letters, polling, hooks, API access, settings and templates', () => {
  let system: TestSystem;
  let http: HttpClient;
  let base: string;
  let browser: Browser;
  let shop: ConsoleProject;
  let failing: ConsoleProject;
  let items: ItemsEndpoint;
  const opened: ConsolePage[] = [];

  async function open(project: ConsoleProject, path: string, width: Width = 'desktop'): Promise<Page> {
    const consolePage = await openConsolePage(browser, width);
    opened.push(consolePage);
    await gotoSignedIn(consolePage.page, base, project.ownerJwt, projectPage(project, path));
    return consolePage.page;
  }

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService, pollingService, deadLetterService, webhookService], {
      environment: {
        ACCESS_CACHE_TTL_MS: '0',
        OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
        // Nothing listens there: a subscription to "Stripe" fails, as a provider outage would.
        STRIPE_API_URL: 'https://127.0.0.1:9',
        WEBHOOK_PROVIDER_BACKOFF_MS: '50',
        WEBHOOK_PROVIDER_BUDGET_MS: '1000',
      },
    });
    base = system.url('gateway');
    http = new HttpClient(base);
    browser = await launchChromium();
    items = await ItemsEndpoint.start([{ id: 'item-1', orderId: 'p-1', amount: 5 }]);
    shop = await createAutomationProject(http, 'Shop orders');
    failing = await createAutomationProject(http, 'Failing orders', FAILING_AUTOMATION);
  }, 120_000);

  afterEach(async () => {
    const errors = opened.flatMap((page) => page.errors);
    for (const page of opened.splice(0)) await page.close();
    // No page logged an error or broke a rule of its Content-Security-Policy.
    expect(errors).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await items?.close();
    await system?.stop();
  });

  it('creates a project token shown once, which then starts runs over HTTP; the list shows its use; a revoked token is refused', async () => {
    const page = await open(shop, 'api-access');
    await page.getByText('No tokens yet.').waitFor();
    await page.getByLabel('Name').fill('checkout backend');
    // The scope an automation needs is chosen already.
    expect(await page.getByRole('checkbox', { name: /automation:trigger/ }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('it will not be shown again').waitFor();
    const token = (await shownOnce(page).textContent())!;
    expect(token).toMatch(/^rl_ext_/);
    await page.getByRole('button', { name: 'Copy the token' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);

    const invocationId = await startRun(http, shop, token, { orderId: 'tok-1', amount: 5 });
    expect((await waitForRun(http, shop, invocationId, FINAL)).status).toBe('SUCCEEDED');

    // Once dismissed, the token is gone from the page; the list shows its prefix, scope and use.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await shownOnce(page).count()).toBe(0);
    await page.reload();
    const tokenRow = row(page, 'checkout backend');
    await tokenRow.waitFor();
    const prefix = (await tokenRow.locator('td').nth(1).textContent())!.replace(/…$/, '');
    expect(prefix.length).toBeGreaterThanOrEqual(8);
    expect(token.startsWith(prefix)).toBe(true);
    expect(await tokenRow.textContent()).toContain('automation:trigger');
    expect(await tokenRow.locator('td').nth(3).locator('time').count()).toBe(1);
    expect(await page.content()).not.toContain(token);

    // Revoking asks first; "Cancel" keeps it.
    await tokenRow.getByRole('button', { name: /^Revoke/ }).click();
    await tokenRow.getByRole('button', { name: 'Cancel' }).click();
    await tokenRow.getByRole('button', { name: /^Revoke/ }).click();
    await tokenRow.getByRole('button', { name: 'Yes, revoke it' }).click();
    await page.getByText('No tokens yet.').waitFor();
    const refused = await http.post(`/v1/orgs/${shop.orgId}/automations/${shop.projectId}/trigger-async`, { event: 'order.paid', payload: { orderId: 'tok-2', amount: 5 } }, { bearer: token });
    expect(refused.status).toBe(401);
  }, 60_000);

  it('replays a dead letter once the definition is fixed, then the rest in bulk after a dry-run count', async () => {
    const token = await triggerToken(http, failing);
    const started = await Promise.all(['dl-1', 'dl-2', 'dl-3'].map((orderId) => startRun(http, failing, token, { orderId, amount: 5 })));
    for (const id of started) expect((await waitForRun(http, failing, id, FINAL, 20_000)).status).toBe('FAILED');
    await eventually('three FLOW dead letters', async () => {
      const listed = await http.get<{ total: number }>(`/v1/orgs/${failing.orgId}/projects/${failing.projectId}/dead-letters`, { bearer: failing.ownerJwt });
      return listed.body.total === 3 ? true : undefined;
    });
    await publish(http, failing, FIXED_AUTOMATION);

    const page = await open(failing, 'dead-letters?unresolved=1');
    await page.getByRole('heading', { name: 'Events (3)' }).waitFor();
    expect(await row(page, 'Order service is down').count()).toBe(3);
    expect(await row(page, 'after 2 attempts').count()).toBe(3);
    // The filter is in the address, and a source that matches nothing says so.
    await page.getByLabel('Source').fill('nowhere');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No dead letters match this filter.').waitFor();
    expect(page.url()).toContain('source=nowhere');
    await page.getByRole('button', { name: 'Clear the filter' }).click();
    await page.getByRole('heading', { name: 'Events (3)' }).waitFor();
    // The filter lives in the address: the box follows it once the navigation is done.
    await page.getByLabel('Unresolved only (not yet replayed)').click();
    await page.waitForURL(/unresolved=1/);

    // One replay: the row's button; the event is then replayed and off the unresolved list.
    await page.getByRole('button', { name: /^Replay the event/ }).first().click();
    await page.getByText('Replayed: a new run started from the event.').waitFor();
    await page.getByRole('heading', { name: 'Events (2)' }).waitFor();

    // Bulk: count first, then replay exactly those, then the outcome.
    await page.getByRole('button', { name: 'Count matching events' }).click();
    await page.getByText('2 events match').waitFor();
    await page.getByRole('button', { name: 'Replay 2 events' }).click();
    const outcome = page.getByRole('status').filter({ has: page.locator('dt') });
    await outcome.waitFor();
    const figures = await page.locator('.outcome-figures dd').allTextContents();
    expect(figures.slice(0, 3)).toEqual(['2', '2', '0']);
    await page.getByText('No dead letters: every event ran.').or(page.getByText('No dead letters match this filter.')).waitFor();

    // Every event is now replayed, successfully, and each started a run that succeeded.
    await page.getByLabel('Unresolved only (not yet replayed)').click();
    await page.waitForURL((url) => !url.search.includes('unresolved'));
    await page.getByRole('heading', { name: 'Events (3)' }).waitFor();
    expect(await row(page, 'replayed: success').count()).toBe(3);
    const runs = await eventually('three replayed runs that succeeded', async () => {
      const logs = await http.get<{ data: Array<{ status: string }> }>(`/v1/orgs/${failing.orgId}/external-invocations/logs?projectId=${failing.projectId}&status=SUCCEEDED`, { bearer: failing.ownerJwt });
      return logs.body.data.length === 3 ? logs.body.data : undefined;
    });
    expect(runs).toHaveLength(3);
  }, 90_000);

  it('creates an inbound hook with its secret shown once; a signed delivery to its URL runs; a revoked hook answers 410', async () => {
    const page = await open(shop, 'webhooks');
    await page.getByText('No inbound hooks.').waitFor();
    await page.getByLabel('Name').fill('orders');
    await page.getByRole('button', { name: 'Create hook' }).click();
    await page.getByText('it will not be shown again').waitFor();
    const secret = (await shownOnce(page).textContent())!;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const hookRow = row(page, 'orders');
    await hookRow.getByText('ACTIVE').waitFor();
    const url = (await hookRow.locator('code').textContent())!;
    expect(url).toMatch(new RegExp(`^${base}/v1/hooks/`));

    const delivered = await deliverToHook(http, url, secret, { orderId: 'hook-1', amount: 5 });
    expect(delivered.status).toBe(202);
    const run = await waitForRun(http, shop, delivered.body.invocationId!, FINAL);
    expect(run).toMatchObject({ status: 'SUCCEEDED', triggerSource: 'WEBHOOK' });
    // The run shows in the project's logs, which link to it.
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.locator(`a[title="${delivered.body.invocationId}"]`).waitFor();
    await page.goBack();

    // The secret is not shown again, and revoking asks first.
    await row(page, 'orders').getByText('ACTIVE').waitFor();
    expect(await page.content()).not.toContain(secret);
    await row(page, 'orders').getByRole('button', { name: /^Revoke/ }).click();
    await row(page, 'orders').getByRole('button', { name: 'Yes, revoke it' }).click();
    await row(page, 'orders').getByText('REVOKED').waitFor();
    const gone = await deliverToHook(http, url, secret, { orderId: 'hook-2', amount: 5 });
    expect([gone.status, gone.body.error]).toEqual([410, 'Webhook has been revoked']);
  }, 60_000);

  it('lists a provider subscription the provider refused as FAILED with the reason; retry and revoke', async () => {
    const page = await open(shop, 'webhooks');
    await page.getByText('No provider subscriptions.').waitFor();
    await page.getByRole('combobox', { name: /^Provider/ }).selectOption('stripe');
    await page.getByLabel('Events (comma-separated)').fill('payment_intent.succeeded');
    // A key the provider's adapter refuses: its words where it happened, and nothing typed lost.
    await page.getByLabel('Secret key').fill('sk_test_bad');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByRole('alert').getByText('credentials.secretKey must be a Stripe secret key').waitFor();
    expect(await page.getByLabel('Events (comma-separated)').inputValue()).toBe('payment_intent.succeeded');
    await page.getByLabel('Secret key').fill('sk_test_consoleKey1');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const subscription = row(page, 'payment_intent.succeeded');
    await subscription.getByText('FAILED').waitFor();
    expect((await subscription.locator('.error-cell').textContent())!.length).toBeGreaterThan(0);
    expect(await page.content()).not.toContain('sk_test_consoleKey1');
    await subscription.getByRole('button', { name: 'Retry the stripe subscription' }).click();
    await subscription.getByText('FAILED').waitFor();
    await subscription.getByRole('button', { name: /^Revoke/ }).click();
    await subscription.getByRole('button', { name: 'Yes, revoke it' }).click();
    await subscription.getByText('REVOKED').waitFor();
  }, 60_000);

  it('turns the master switch off in the settings and the next API call is refused with 403; a refused save keeps what was typed', async () => {
    const quiet = await createAutomationProject(http, 'Quiet project');
    const token = await triggerToken(http, quiet);
    await startRun(http, quiet, token, { orderId: 'on-1', amount: 5 });

    const page = await open(quiet, 'api-settings');
    const master = page.getByLabel('Enable the external API for this project');
    expect(await master.isChecked()).toBe(true);
    await page.getByText('Callback secret: not set').waitFor();
    // A refused save: the API's words where it happened, and the typed value still there.
    await page.getByLabel('Callback URL (https)').fill('http://insecure.example.com/callback');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').getByText('defaultCallbackUrl must be an https URL').waitFor();
    expect(await page.getByLabel('Callback URL (https)').inputValue()).toBe('http://insecure.example.com/callback');

    await page.getByLabel('Callback URL (https)').fill('https://hooks.example.com/runline');
    await page.getByLabel('Secret (optional)').fill('callback-secret-1');
    await master.uncheck();
    await page.getByText('every token call to this project is refused with 403').waitFor();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved. The next request to the project follows these settings.').waitFor();
    await page.getByText('Callback secret: set').waitFor();
    expect(await page.getByLabel('Replace the secret (leave empty to keep it)').inputValue()).toBe('');
    expect(await page.content()).not.toContain('callback-secret-1');

    const refused = await http.post(`/v1/orgs/${quiet.orgId}/automations/${quiet.projectId}/trigger-async`, { event: 'order.paid', payload: { orderId: 'off-1', amount: 5 } }, { bearer: token });
    expect([refused.status, refused.body]).toEqual([403, { error: 'External API access is disabled for this project' }]);

    // After a reload the page shows what was saved.
    await page.reload();
    await page.getByText('Callback secret: set').waitFor();
    expect(await page.getByLabel('Enable the external API for this project').isChecked()).toBe(false);
    expect(await page.getByLabel('Callback URL (https)').inputValue()).toBe('https://hooks.example.com/runline');
  }, 60_000);

  it('keeps templates and builds the request example from one, with snippets to copy', async () => {
    const page = await open(shop, 'templates');
    await page.getByText('No templates yet.').waitFor();
    // Only the endpoints of an automation project are offered.
    expect(await page.getByLabel('Endpoint').first().locator('option').allTextContents()).toEqual([
      'automations.trigger: run the automation, wait for the result',
      'automations.trigger-async: run the automation in the background',
    ]);
    await page.getByLabel('Name').fill('paid order');
    await page.getByLabel('Body (JSON)').fill('{"event": "order.paid", "payload": {"orderId": "t-1"');
    await page.getByRole('button', { name: 'Add template' }).click();
    await page.getByRole('alert').getByText('The body is not valid JSON').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('paid order');
    await page.getByLabel('Body (JSON)').fill('{"event": "order.paid", "payload": {"orderId": "t-1", "amount": 7}}');
    await page.getByRole('button', { name: 'Add template' }).click();
    const templateRow = row(page, 'paid order');
    await templateRow.waitFor();

    await templateRow.getByRole('button', { name: 'Use paid order in the request builder' }).click();
    const curl = page.getByLabel('curl snippet');
    await curl.getByText('"t-1"', { exact: false }).waitFor();
    expect(page.url()).toContain('template=');
    const curlText = (await curl.textContent())!;
    expect(curlText).toContain(`/v1/orgs/${shop.orgId}/automations/${shop.projectId}/trigger-async`);
    expect(curlText).toContain('$RUNLINE_TOKEN');
    expect(await page.getByLabel('Python snippet').textContent()).toContain('t-1');
    expect(await page.getByLabel('JavaScript snippet').textContent()).toContain('t-1');
    await page.getByRole('button', { name: 'Copy the curl snippet' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(curlText);

    // Edit, then delete behind a confirmation.
    await templateRow.getByRole('button', { name: 'Edit paid order' }).click();
    await page.getByLabel('Name').fill('paid order (big)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const renamed = row(page, 'paid order (big)');
    await renamed.waitFor();
    await renamed.getByRole('button', { name: /^Delete/ }).click();
    await renamed.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('No templates yet.').waitFor();
  }, 60_000);

  it('registers a polling trigger, shows its last poll and last seen value, updates and deletes it', async () => {
    const page = await open(shop, 'polling-triggers');
    await page.getByText('No polling triggers.').waitFor();
    await page.getByLabel('Source').fill('crm');
    await page.getByLabel('Poll key').fill('new-orders');
    await page.getByLabel('Endpoint URL (called with GET)').fill(items.url);
    await page.getByRole('button', { name: 'Register trigger' }).click();
    const triggerRow = row(page, 'new-orders');
    await triggerRow.waitFor();
    await eventually('the first poll', async () => (items.calls > 0 ? true : undefined));
    await eventually('the last seen value in the page', async () => {
      await page.reload();
      await triggerRow.waitFor();
      return (await triggerRow.textContent())!.includes('item-1') ? true : undefined;
    });
    expect(await triggerRow.locator('td').nth(3).locator('time').count()).toBe(1);

    await triggerRow.getByRole('button', { name: 'Edit new-orders' }).click();
    await page.getByLabel('Interval (seconds)').fill('120');
    await page.getByRole('button', { name: 'Update trigger' }).click();
    await triggerRow.getByText('2 min 0 s').waitFor();
    await triggerRow.getByRole('button', { name: /^Delete/ }).click();
    await triggerRow.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('No polling triggers.').waitFor();
  }, 60_000);

  it('passes axe (no serious or critical violation) on each page at 1280 px and 390 px, and saves their screenshots', async () => {
    // Something on every page: a token, a hook, a template, a trigger; the dead letters exist.
    await triggerToken(http, shop);
    await http.post(`/v1/orgs/${shop.orgId}/projects/${shop.projectId}/webhooks`, { name: 'crm-contacts' }, { bearer: shop.ownerJwt });
    await http.post(`/v1/orgs/${shop.orgId}/projects/${shop.projectId}/templates`, { name: 'sample order', endpoint: 'automations.trigger-async', body: { event: 'order.paid', payload: { orderId: 's-1', amount: 3 } } }, { bearer: shop.ownerJwt });
    await http.post(`/v1/orgs/${shop.orgId}/projects/${shop.projectId}/polling-triggers`, { source: 'erp', pollKey: 'invoices', pollEndpoint: items.url, intervalMs: 3_600_000 }, { bearer: shop.ownerJwt });
    const pages: Array<[ConsoleProject, string, string, string]> = [
      [failing, 'dead-letters', 'dead-letters', 'Events (3)'],
      [shop, 'polling-triggers', 'polling-triggers', 'invoices'],
      [shop, 'webhooks', 'webhooks', 'crm-contacts'],
      [shop, 'api-access', 'api-access', 'browser tests'],
      [shop, 'api-settings', 'api-settings', 'Callback secret: not set'],
      [shop, 'templates', 'templates', 'POST'],
    ];
    for (const width of ['desktop', 'phone'] as const) {
      for (const [project, path, name, ready] of pages) {
        const page = await open(project, path, width);
        await page.getByText(ready, { exact: false }).first().waitFor();
        await screenshot(page, name);
        expect({ page: name, width, violations: await seriousViolations(page) }).toEqual({ page: name, width, violations: [] });
        // Nothing sticks out of the window, whatever the width (tables scroll inside their frame).
        const sticking = await page.evaluate(() =>
          [...document.querySelectorAll('body *')]
            .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
            // Inside a frame that scrolls sideways (the project navigation strip, a snippet) is fine.
            .filter((element) => {
              for (let parent = element.parentElement; parent; parent = parent.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(parent).overflowX)) return false;
              return true;
            })
            .map((element) => `${element.tagName.toLowerCase()}.${element.className}`),
        );
        expect({ page: name, width, sticking }).toEqual({ page: name, width, sticking: [] });
      }
    }
  }, 120_000);
});
