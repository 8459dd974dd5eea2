import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import type { Browser } from 'playwright-core';
import { gotoSignedIn, launchChromium, openConsolePage, type ConsolePage } from './support/console-browser.js';
import { createAutomationProject, startRun, triggerToken, waitForRun, type ConsoleProject } from './support/console-fixtures.js';

/** Longer than the run page's polling interval (RUN_POLL_MS, 2 s): a page that polled would read the run again meanwhile. */
const HOLD_MS = 4_500;

/**
 * The run page follows the run's event stream (DESIGN section 14) instead of polling: while the
 * run is held in its http node the page reads nothing more, and its end shows at once, sooner
 * than a poll would bring it. Debian's Chromium against the gateway and invocation services on
 * real PostgreSQL and NATS.
 */
describe('web console: the run page follows the run as it happens', () => {
  let system: TestSystem;
  let http: HttpClient;
  let base: string;
  let browser: Browser;
  let endpoint: Server;
  let release: () => void = () => undefined;
  let project: ConsoleProject;
  let token: string;
  let opened: ConsolePage | undefined;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
    base = system.url('gateway');
    http = new HttpClient(base);
    browser = await launchChromium();
    // The run's http node waits here until the test releases it.
    endpoint = createServer((_request, response) => {
      const answer = () => {
        if (!response.headersSent) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      };
      const previous = release;
      release = () => {
        previous();
        answer();
      };
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hold`;
    project = await createAutomationProject(http, 'Streaming shop', {
      schemaVersion: 1,
      workflow: {
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'POST', url, saveAs: 'reply', next: 'done' },
          done: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" },
        },
      },
    });
    token = await triggerToken(http, project);
  }, 120_000);

  afterAll(async () => {
    release();
    await opened?.close();
    await browser?.close();
    await system?.stop();
    endpoint?.closeAllConnections();
    await new Promise((resolve) => endpoint?.close(resolve));
  });

  it('shows the run RUNNING, reads nothing while it is held, and shows SUCCEEDED as soon as it ends', async () => {
    const id = await startRun(http, project, token, { orderId: 'o-1', amount: 5 });
    await waitForRun(http, project, id, (status) => status === 'RUNNING');
    opened = await openConsolePage(browser);
    const { page } = opened;
    const reads: number[] = [];
    let streams = 0;
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path === `/v1/orgs/${project.orgId}/external-invocations/${id}`) reads.push(Date.now());
      if (path === `/v1/orgs/${project.orgId}/external-invocations/${id}/events`) streams += 1;
    });
    await gotoSignedIn(page, base, project.ownerJwt, `organizations/${project.orgId}/projects/${project.projectId}/runs/${id}`);
    const badge = page.locator('h1 + *').or(page.locator('.badge')).filter({ hasText: /RUNNING|SUCCEEDED/ }).first();
    await badge.filter({ hasText: 'RUNNING' }).waitFor();
    await page.waitForTimeout(500);
    expect(streams).toBe(1);
    const readsBeforeHold = reads.length;

    await page.waitForTimeout(HOLD_MS);
    // No polling while the stream is open and nothing happens.
    expect(reads.length).toBe(readsBeforeHold);

    release();
    await page.locator('.badge').filter({ hasText: 'SUCCEEDED' }).first().waitFor();
    // The page did not poll while the run was held, and its one stream never broke (a broken
    // stream is what turns polling on): the stream brought the end.
    expect(streams).toBe(1);
    await page.getByText('"orderId": "o-1"').or(page.getByText('o-1')).first().waitFor();
    expect(opened.errors).toEqual([]);
  });
});
