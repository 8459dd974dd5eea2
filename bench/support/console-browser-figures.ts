/// <reference lib="dom" />
// Code passed to page.evaluate runs in the browser and is typed against the DOM.
//
// The web console in Debian's Chromium, timed: the figures console/e2e/console-core.e2e-spec.ts
// checks only for behaviour (that the page gets ready, that a filter change shows the filtered
// rows). A fresh database, the build's gateway and invocation service (servers/system.server.ts,
// which serves dist/console), one organization with an automation project through the console
// API, and `runs` finished runs written straight into its read model, as the browser test does.
import { existsSync } from 'node:fs';
import jwt from 'jsonwebtoken';
import { chromium, type Page } from 'playwright-core';
import { insertRuns } from '../../console/e2e/support/console-fixtures.js';
import { openBenchDatabase } from './bench-database.js';
import { distributionOf, type Distribution } from './distribution.js';
import { startSystem } from './servers.js';
import type { BenchSession } from './session.js';

/** Debian's Chromium, as the browser tests use it (CHROMIUM_PATH overrides). */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** The goals the browser test held before it checked behaviour only (docs/console.md), in ms. */
export const CONSOLE_GOALS = { healthReady: 1000, filterFrame: 100, filterRows: 1000 } as const;

export interface ConsoleFigures {
  runs: number;
  /** From the start of the navigation to the health page's figures shown. */
  healthReady: Distribution;
  /** From a status filter click to the next frame painted, on the logs page with 200 rows. */
  filterFrame: Distribution;
  /** From that click to the filtered rows shown (the API read included). */
  filterRows: Distribution;
}

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export async function measureConsole(session: BenchSession, options: { dist: string; runs: number; samples: number }): Promise<ConsoleFigures> {
  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the console database', () => database.drop());
  const system = await startSystem(session, { bus: 'in-process', profile: false, dist: options.dist, databaseUrl: database.url });
  const base = system.server.url;
  const ownerJwt = jwt.sign({ sub: 'bench-console-owner', roles: [] }, system.consoleJwtSecret, { algorithm: 'HS256', expiresIn: 3600 });
  const project = await createProject(base, ownerJwt);
  await insertRuns(database.url, project, options.runs);

  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  session.onCleanup('close Chromium', () => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const projectPage = (name: string) => `${base}/console/organizations/${project.orgId}/projects/${project.projectId}/${name}`;
  await page.goto(`${base}/console/#token=${encodeURIComponent(ownerJwt)}`);
  await page.locator('h1').first().waitFor();

  // A first navigation warms the caches (browser, gateway, PostgreSQL); then the samples.
  const healthReady: number[] = [];
  for (let sample = 0; sample <= options.samples; sample++) {
    await page.goto(projectPage('health'), { waitUntil: 'commit' });
    await page.locator('[data-ready="health"]').waitFor();
    const ready = await page.evaluate(() => performance.now());
    if (sample > 0) healthReady.push(ready);
  }

  const filterFrame: number[] = [];
  const filterRows: number[] = [];
  const statuses = ['failed', 'timeout', 'succeeded'];
  for (let round = 0; round < Math.max(1, Math.ceil(options.samples / statuses.length)); round++) {
    await page.goto(projectPage('logs'));
    await page.waitForFunction(() => document.querySelectorAll('table.runs tbody tr').length === 200);
    for (const [index, status] of statuses.entries()) {
      const timing = await timeFilterChange(page, status, statuses.slice(0, index + 1));
      filterFrame.push(timing.frame);
      filterRows.push(timing.rows);
    }
  }
  await context.close();
  return { runs: options.runs, healthReady: distributionOf(healthReady), filterFrame: distributionOf(filterFrame), filterRows: distributionOf(filterRows) };
}

/** Ticks the status's checkbox and times the next frame and the rows of the statuses ticked so far. */
async function timeFilterChange(page: Page, status: string, ticked: string[]): Promise<{ frame: number; rows: number }> {
  await page.getByRole('checkbox', { name: status }).evaluate((element) => {
    const w = window as unknown as { filterStart: number; frameAfter?: number };
    const start = performance.now();
    w.filterStart = start;
    (element as HTMLInputElement).click();
    requestAnimationFrame(() => (w.frameAfter = performance.now() - start));
  });
  await page.waitForFunction(() => (window as unknown as { frameAfter?: number }).frameAfter !== undefined);
  await page.waitForFunction(
    (wanted) => {
      const rows = [...document.querySelectorAll('table.runs tbody tr td:first-child')].map((cell) => cell.textContent ?? '');
      return rows.length > 0 && rows.every((text) => wanted.some((word) => text.includes(word)));
    },
    ticked.map((word) => word.toUpperCase()),
  );
  return page.evaluate(() => {
    const w = window as unknown as { filterStart: number; frameAfter?: number };
    const result = { frame: w.frameAfter!, rows: performance.now() - w.filterStart };
    delete w.frameAfter;
    return result;
  });
}

/** An organization with an automation project, its definition published, through the console API. */
async function createProject(base: string, ownerJwt: string): Promise<{ orgId: string; projectId: string }> {
  const call = async (method: string, path: string, body: unknown, expected: number): Promise<Record<string, unknown>> => {
    const response = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${ownerJwt}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const org = await call('POST', '/v1/orgs', { name: 'Console benchmark' }, 201);
  const orgId = String(org.orgId);
  const project = await call('POST', `/v1/orgs/${orgId}/projects`, { name: 'Busy project', type: 'AUTOMATION' }, 201);
  const projectId = String(project.projectId);
  const definition = {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
      start: 'done',
      nodes: { done: { type: 'return', value: "{ 'orderId': payload.orderId }" } },
    },
  };
  await call('PUT', `/v1/orgs/${orgId}/projects/${projectId}/definition`, { definition }, 200);
  await call('POST', `/v1/orgs/${orgId}/projects/${projectId}/publish`, {}, 200);
  return { orgId, projectId };
}

