/// <reference lib="dom" />
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import type { Browser, Page } from 'playwright-core';
import { gotoSignedIn, launchChromium, openConsolePage, screenshot, seriousViolations, WIDTHS, type ConsolePage, type Width } from './support/console-browser.js';
import { createAutomationProject, JOURNEY_AUTOMATION, waitForRun, type ConsoleProject } from './support/console-fixtures.js';
import { eventually } from './support/project-pages-support.js';

const FINAL = (status: string) => ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(status);
const projectPage = (project: ConsoleProject, page: string) => `organizations/${project.orgId}/projects/${project.projectId}/${page}`;
const row = (page: Page, id: string) => page.locator('tbody tr').filter({ has: page.getByText(id, { exact: true }) });

/**
 * The automation of these tests: a weekday report in Berlin time, an hourly sync, and the
 * journey's workflow (a payload without an amount fails at its `refuse` node, so the
 * schedules' payloads carry one). Nothing fires during a test: the report is due at 09:00
 * Berlin time on weekdays, the sync an hour after the publish.
 */
const SCHEDULED_AUTOMATION = {
  ...JOURNEY_AUTOMATION,
  workflow: {
    ...JOURNEY_AUTOMATION.workflow,
    schedules: [
      { id: 'daily-report', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', payload: { orderId: 'report', amount: 5 } },
      { id: 'sync', every: '1h', payload: { orderId: 'sync', amount: 5 } },
    ],
  },
};

/**
 * The console's Schedules page in Debian's Chromium, against the started gateway, invocation
 * and scheduler services on real PostgreSQL and NATS (DESIGN section 12): each schedule's
 * expression in words, its next fires in the viewer's time and the schedule's, pause and resume
 * (kept by the scheduler), run now (a SCHEDULE run whose page opens from the row, then the
 * row's last run), a backfill of a past range and the refusal of one too large, and the empty
 * state of a project without schedules. Axe and both widths on each state.
 */
describe('web console: schedules', () => {
  let system: TestSystem;
  let http: HttpClient;
  let base: string;
  let browser: Browser;
  let scheduled: ConsoleProject;
  let plain: ConsoleProject;
  const opened: ConsolePage[] = [];

  async function open(project: ConsoleProject, width: Width = 'desktop'): Promise<Page> {
    const consolePage = await openConsolePage(browser, width);
    opened.push(consolePage);
    await gotoSignedIn(consolePage.page, base, project.ownerJwt, projectPage(project, 'schedules'));
    return consolePage.page;
  }

  const listed = (project: ConsoleProject) => http.get<{ data: Array<{ id: string; paused: boolean; lastFire: { invocationId: string } | null }> }>(`/v1/orgs/${project.orgId}/projects/${project.projectId}/schedules`, { bearer: project.ownerJwt });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    base = system.url('gateway');
    http = new HttpClient(base);
    browser = await launchChromium();
    scheduled = await createAutomationProject(http, 'Reports', SCHEDULED_AUTOMATION);
    plain = await createAutomationProject(http, 'No schedules');
  }, 120_000);

  afterEach(async () => {
    const errors = opened.flatMap((page) => page.errors);
    for (const page of opened.splice(0)) await page.close();
    // No page logged an error or broke a rule of its Content-Security-Policy.
    expect(errors).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
  });

  it('shows each schedule in words with its next five fires in the viewer’s time and the schedule’s', async () => {
    const page = await open(scheduled);
    const report = row(page, 'daily-report');
    await report.getByText('At 09:00, Monday through Friday (Europe/Berlin)').waitFor();
    await report.getByText('0 9 * * 1-5').waitFor();
    await report.getByText('Active').waitFor();
    const fires = report.getByRole('list', { name: 'Next fires of daily-report' }).getByRole('listitem');
    expect(await fires.count()).toBe(5);
    // The viewer's time (a <time> with the UTC instant on hover), then the schedule's zone.
    const first = fires.first();
    const instant = (await first.locator('time').getAttribute('datetime'))!;
    expect(new Date(instant).getUTCMinutes()).toBe(0);
    expect(await first.locator('time').getAttribute('title')).toBe(instant);
    expect(await first.textContent()).toMatch(/(Mon|Tue|Wed|Thu|Fri) 09:00 Europe\/Berlin$/);

    const sync = row(page, 'sync');
    await sync.getByText('Every hour').waitFor();
    await sync.getByText('every 1h').waitFor();
    expect(await sync.getByRole('listitem').count()).toBe(5);
    expect(await sync.textContent()).toContain('not yet');
  }, 60_000);

  it('pauses and resumes a schedule; the pause is kept by the scheduler', async () => {
    const page = await open(scheduled);
    const sync = row(page, 'sync');
    await sync.getByRole('button', { name: 'Pause sync' }).click();
    await sync.getByText('Paused').waitFor();
    expect((await listed(scheduled)).body.data.find((schedule) => schedule.id === 'sync')?.paused).toBe(true);
    // A paused schedule still shows when it would fire if resumed.
    expect(await sync.getByRole('listitem').count()).toBe(5);

    await page.reload();
    await row(page, 'sync').getByText('Paused').waitFor();
    await row(page, 'sync').getByRole('button', { name: 'Resume sync' }).click();
    await row(page, 'sync').getByText('Active').waitFor();
    expect((await listed(scheduled)).body.data.find((schedule) => schedule.id === 'sync')?.paused).toBe(false);
  }, 60_000);

  it('runs a schedule now: a SCHEDULE run that opens from the row and becomes the row’s last run', async () => {
    const page = await open(scheduled);
    const report = row(page, 'daily-report');
    await report.getByRole('button', { name: 'Run now: daily-report' }).click();
    const started = report.getByRole('status').filter({ hasText: 'Run started' });
    await started.waitFor();
    const href = (await started.getByRole('link', { name: 'open it' }).getAttribute('href'))!;
    const invocationId = decodeURIComponent(href.split('/').at(-1)!);
    const run = await waitForRun(http, scheduled, invocationId, FINAL, 20_000);
    expect(run).toMatchObject({ status: 'SUCCEEDED', triggerSource: 'SCHEDULE', schedulerJobName: 'schedule:daily-report' });

    await started.getByRole('link', { name: 'open it' }).click();
    await page.waitForURL(new RegExp(`/runs/${invocationId}$`));
    await page.getByText('SUCCEEDED').first().waitFor();
    await page.goBack();

    // The row's last run links to it, with its status in a word.
    await eventually('the last run in the row', async () => {
      await page.reload();
      const text = await row(page, 'daily-report').locator('td').nth(2).textContent();
      return text?.includes('SUCCEEDED') ? true : undefined;
    });
    expect(await row(page, 'daily-report').locator(`a[title="${invocationId}"]`).count()).toBe(1);
  }, 60_000);

  it('backfills a past range, one run per fire time, and shows the refusal of a range too large without losing it', async () => {
    const page = await open(scheduled);
    const report = row(page, 'daily-report');
    await report.getByText('Backfill…').click();
    // Monday 5 to Saturday 10 January 2026 in the viewer's time: five weekday fires at 09:00 Berlin.
    await report.getByLabel('From').fill('2026-01-05T00:00:00');
    await report.getByLabel('To').fill('2026-01-10T00:00:00');
    await report.getByRole('button', { name: 'Run the backfill' }).click();
    await report.getByText('5 runs started.').waitFor();
    const runs = await eventually('five backfilled runs', async () => {
      const logs = await http.get<{ data: Array<{ scheduledFor: string | null; triggerSource: string }> }>(`/v1/orgs/${scheduled.orgId}/external-invocations/logs?projectId=${scheduled.projectId}`, {
        bearer: scheduled.ownerJwt,
      });
      const backfilled = logs.body.data.filter((entry) => entry.scheduledFor?.startsWith('2026-01-'));
      return backfilled.length === 5 ? backfilled : undefined;
    });
    expect(runs.every((entry) => entry.triggerSource === 'SCHEDULE')).toBe(true);

    // An hourly schedule over two months has more than 1,000 fire times: refused, the range kept.
    const sync = row(page, 'sync');
    await sync.getByText('Backfill…').click();
    await sync.getByLabel('From').fill('2025-01-01T00:00:00');
    await sync.getByLabel('To').fill('2025-03-01T00:00:00');
    await sync.getByRole('button', { name: 'Run the backfill' }).click();
    const refusal = sync.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/^The backfill failed: .*1,?000/);
    expect(await sync.getByLabel('From').inputValue()).toMatch(/^2025-01-01T00:00/);
  }, 60_000);

  it('teaches how to add schedules when the automation has none', async () => {
    const page = await open(plain);
    await page.getByText('No schedules.').waitFor();
    expect(await page.getByText('workflow.schedules', { exact: true }).count()).toBe(1);
    expect(await page.locator('pre').textContent()).toContain('"cron": "0 9 * * 1-5"');
  }, 60_000);

  it('passes axe on the list, a fold open and the empty state at 1280 px and 390 px, and saves their screenshots', async () => {
    const found: Record<string, unknown> = {};
    for (const width of Object.keys(WIDTHS) as Width[]) {
      const page = await open(scheduled, width);
      await row(page, 'daily-report').getByText('Monday through Friday', { exact: false }).waitFor();
      await row(page, 'sync').getByText('Backfill…').click();
      const violations = await seriousViolations(page);
      if (violations.length) found[`schedules-${width}`] = violations;
      // Nothing sticks out sideways on a phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await screenshot(page, 'schedules');

      const empty = await open(plain, width);
      await empty.getByText('No schedules.').waitFor();
      const emptyViolations = await seriousViolations(empty);
      if (emptyViolations.length) found[`schedules-empty-${width}`] = emptyViolations;
      await screenshot(empty, 'schedules-empty');
    }
    expect(found).toEqual({});
  }, 90_000);
});
