/// <reference lib="dom" />
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openConsolePage, screenshot, seriousViolations, signInLink, WIDTHS, type ConsolePage, type Width } from './support/console-browser.js';
import { createAutomationProject, JOURNEY_AUTOMATION, startRun, triggerToken, waitForRun } from './support/console-fixtures.js';

const FINAL = (status: string) => ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(status);
const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** The journey's workflow with a broken expression in its `done` node: valid JSON and structure, refused by the save. */
const BROKEN = { ...JOURNEY_AUTOMATION, workflow: { ...JOURNEY_AUTOMATION.workflow, nodes: { ...JOURNEY_AUTOMATION.workflow.nodes, done: { type: 'return', value: "{ 'orderId': payload.orderId, " } } } };

/** The 1-based line of the first line of `text` holding `needle` after the line holding `after`. */
function lineOf(text: string, after: string, needle: string): number {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.includes(after));
  return lines.findIndex((line, index) => index > start && line.includes(needle)) + 1;
}

/** Replaces the editor's whole text, as a paste would. */
async function replaceText(page: Page, text: string): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(text);
}

/** A chain of `count` set nodes with a branch every tenth node, ending in a return: a large flow for the timing. */
function largeDefinition(count: number) {
  const nodes: Record<string, object> = {};
  for (let index = 0; index < count - 1; index++) {
    const next = `s${index + 1}`;
    nodes[`s${index}`] = index % 10 === 5 ? { type: 'branch', cases: [{ if: `payload.amount > ${index}`, next }], else: `s${Math.min(count - 1, index + 3)}` } : { type: 'set', values: { [`v${index}`]: `${index}` }, next };
  }
  nodes[`s${count - 1}`] = { type: 'return', value: "{ 'ok': true }" };
  return { schemaVersion: 1, workflow: { trigger: { externalEnabled: true, key: 'external_event' }, start: 's0', nodes } };
}

/**
 * Building and following a flow in the console (issue 35), in Debian's Chromium against the
 * gateway, invocation and scheduler services on real PostgreSQL and NATS: a new user signs in
 * with the link, creates an organization and an automation project, gets the starter
 * definition, uses the editor's completion, saves a definition the API refuses (and sees the
 * problem at its line and node), fixes and publishes it, makes a token, runs it with the curl
 * line the page shows, and follows the run on the graph of the version it used. Axe and both
 * widths on the definition and run pages; the 200-node definition page timed.
 */
describe('web console: build and follow a flow', () => {
  let system: TestSystem;
  let http: HttpClient;
  let base: string;
  let browser: Browser;
  const opened: ConsolePage[] = [];
  const desktopUserId = `new-user-${process.pid}`;
  const jwt = consoleJwt(desktopUserId);
  let journey: { orgId: string; projectId: string; invocationId: string } | undefined;

  async function open(width: Width = 'desktop'): Promise<Page> {
    const consolePage = await openConsolePage(browser, width);
    opened.push(consolePage);
    return consolePage.page;
  }

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    base = system.url('gateway');
    http = new HttpClient(base);
    browser = await launchChromium();
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

  // The whole path at both widths, each a new user of its own; the later tests use the desktop one's.
  it.each(Object.keys(WIDTHS) as Width[])('takes a new user from the sign-in link to a published flow that ran, seen on its graph (%s)', async (width) => {
    const userId = width === 'desktop' ? desktopUserId : `${desktopUserId}-${width}`;
    const jwt = consoleJwt(userId);
    const page = await open(width);
    await page.goto(signInLink(base, jwt));
    await page.getByText('You are not a member of any organization yet.').waitFor();

    // 1. An organization and an automation project, from the console.
    await page.getByLabel('Organization name').fill('Acme shop');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: /Acme shop/ }).waitFor();
    await page.getByText('New project in Acme shop').click();
    await page.getByLabel('Project name').fill('Refunds');
    await page.getByLabel('Type').selectOption('AUTOMATION');
    await page.getByRole('button', { name: 'Create project' }).click();

    // 2. The definition page offers the starter of its type, drawn as a graph.
    await page.waitForURL(/\/definition$/);
    const [, orgId, projectId] = /organizations\/([^/]+)\/projects\/([^/]+)\/definition$/.exec(page.url())!;
    await page.getByRole('heading', { name: 'Start from the starter definition' }).waitFor();
    expect(await page.locator('.cm-content').textContent()).toContain('"expectedPayload"');
    await page.locator('.react-flow__node').filter({ hasText: 'n1' }).waitFor();

    // The editor completes node types where a node's type goes.
    await replaceText(page, '{\n  "schemaVersion": 1,\n  "workflow": {\n    "start": "n1",\n    "nodes": {\n      "n1": { "type": "" }\n    }\n  }\n}');
    await page.keyboard.press('ControlOrMeta+Home');
    for (let index = 0; index < 5; index++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    for (let index = 0; index < 3; index++) await page.keyboard.press('ArrowLeft');
    // Typing in a node's type offers the node types that match.
    await page.keyboard.type('r');
    const options = page.locator('.cm-tooltip-autocomplete li');
    await options.first().waitFor();
    expect(await options.allTextContents()).toEqual(expect.arrayContaining(['"return"', '"branch"', '"approval"']));
    await page.keyboard.press('Escape');
    // The schema's check, at the line, while typing: the empty type is no node type.
    await page.getByRole('region', { name: 'Problems in the draft' }).getByText(': node "n1": unknown node type "r" (one of:', { exact: false }).waitFor();
    expect(await page.getByRole('region', { name: 'Problems in the draft' }).getByRole('button').textContent()).toBe('Line 6');

    // 3. A definition the API refuses: its problem shown at its line and on its node.
    const broken = pretty(BROKEN);
    await replaceText(page, broken);
    await page.getByRole('button', { name: 'Save draft' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/node "done"/);
    const problems = page.getByRole('region', { name: 'Problems in the draft' });
    const valueLine = lineOf(broken, '"done"', '"value"');
    await problems.getByText(new RegExp(`^Line ${valueLine}$`)).waitFor();
    expect(await problems.textContent()).toContain('node "done"');
    await page.locator('.cm-lintRange-error').first().waitFor();
    await page.locator('.flow-node-problem').filter({ hasText: 'done' }).waitFor();
    expect((await http.get<{ version: number | null }>(`/v1/orgs/${orgId}/projects/${projectId}/definition?stage=draft`, { bearer: jwt })).body.version).toBeNull();
    await screenshot(page, 'definition-refused');

    // 4. Fixed, saved, compared and published behind a confirmation.
    await replaceText(page, pretty(JOURNEY_AUTOMATION));
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as draft version 1.' }).waitFor();
    expect(await page.locator('.react-flow__node').count()).toBe(5);
    await page.getByRole('button', { name: /^Publish: Publish draft version 1\?/ }).click();
    await page.getByRole('button', { name: 'Publish version 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Published version 1' }).waitFor();
    const history = page.getByRole('table', { name: 'Published versions' });
    await history.getByText('1 (in use)').waitFor();
    expect(await history.textContent()).toContain(userId);
    // The diff of the draft as typed against the published version.
    await replaceText(page, pretty({ ...JOURNEY_AUTOMATION, workflow: { ...JOURNEY_AUTOMATION.workflow, start: 'decide' } }));
    await page.getByText('Compare the draft (as typed) with published version 1').click();
    const diff = page.getByLabel('Differences between version 1 and the draft');
    await diff.waitFor();
    expect(await diff.textContent()).toContain('−     "start": "total",');
    expect(await diff.textContent()).toContain('+     "start": "decide",');

    // 5. A token from API access, and the curl line the definition page shows, run as pasted.
    const curl = (await page.locator('pre.snippet code').textContent())!;
    await page.getByRole('link', { name: 'create one under API access' }).click();
    await page.getByLabel('Name').fill('journey');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('shown-once-value').textContent())!;
    const url = /-X POST '([^']+)'/.exec(curl)![1]!;
    const body = JSON.parse(/--data-raw '([^']+)'/.exec(curl)![1]!) as Record<string, unknown>;
    expect(curl).toContain('Bearer $RUNLINE_TOKEN');
    const started = await http.post<{ invocationId: string }>(new URL(url).pathname, body, { bearer: token });
    expect(started.status).toBe(202);
    const invocationId = started.body.invocationId;
    // The example's payload has no amount: the run fails at the `refuse` node.
    expect(await waitForRun(http, { orgId: orgId!, projectId: projectId!, ownerJwt: jwt, ownerId: userId }, invocationId, FINAL, 20_000)).toMatchObject({ status: 'FAILED' });

    // 6. The run, from the logs, on the graph of the version it used.
    await page.getByRole('link', { name: 'Logs', exact: true }).first().click();
    await page.locator(`a[title="${invocationId}"]`).click();
    await page.getByRole('heading', { name: 'Graph (definition version 1)' }).waitFor();
    const failing = page.locator('.flow-node-failing');
    await failing.waitFor();
    expect(await failing.textContent()).toMatch(/refuse.*failed here/);
    expect(await page.locator('.flow-node-succeeded').allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^Open step total.*succeeded · \d+ ms/), expect.stringMatching(/^Open step decide.*succeeded/)]));
    expect(await page.locator('.flow-node-skipped').count()).toBe(2);
    await page.getByRole('button', { name: /^Open step refuse fail failed here/ }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('run-step-2');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Order  has no amount');
    if (width === 'desktop') journey = { orgId: orgId!, projectId: projectId!, invocationId };
  }, 120_000);

  it('passes axe on the definition page and the run page at 1280 px and 390 px, and saves their screenshots', async () => {
    expect(journey).toBeDefined();
    const { orgId, projectId, invocationId } = journey!;
    const found: Record<string, unknown> = {};
    for (const width of Object.keys(WIDTHS) as Width[]) {
      const page = await open(width);
      await page.goto(signInLink(base, jwt, `organizations/${orgId}/projects/${projectId}/definition`));
      await page.locator('.react-flow__node').nth(4).waitFor();
      await page.getByRole('table', { name: 'Published versions' }).waitFor();
      const violations = await seriousViolations(page);
      if (violations.length) found[`definition-${width}`] = violations;
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await screenshot(page, 'definition');

      await page.goto(signInLink(base, jwt, `organizations/${orgId}/projects/${projectId}/runs/${invocationId}`));
      await page.locator('.flow-node-failing').waitFor();
      const runViolations = await seriousViolations(page);
      if (runViolations.length) found[`run-graph-${width}`] = runViolations;
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await screenshot(page, 'run-graph');
    }
    expect(found).toEqual({});
  }, 90_000);

  it('draws each run on the graph of the version it ran: one before a publish, one after, and one accepted before it that ran after', async () => {
    const project = await createAutomationProject(http, 'Versions');
    const token = await triggerToken(http, project);
    const ended = (invocationId: string) => waitForRun(http, project, invocationId, FINAL, 20_000);
    const before = await startRun(http, project, token, { orderId: 'before', amount: 5 });
    expect(await ended(before)).toMatchObject({ status: 'SUCCEEDED', definitionVersion: 1 });
    // Accepted under version 1, due once version 2 is published: it runs version 2.
    const delayed = await startRun(http, project, token, { orderId: 'delayed', amount: 5 }, { body: { delaySeconds: 3 } });
    const second = { ...JOURNEY_AUTOMATION, workflow: { ...JOURNEY_AUTOMATION.workflow, start: 'check', nodes: { check: { type: 'set', values: { seen: 'payload.orderId' }, next: 'reply' }, reply: { type: 'return', value: "{ 'version': 2 }" } } } };
    const projectRoute = `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
    expect((await http.put(`${projectRoute}/definition`, { definition: second }, { bearer: project.ownerJwt })).status).toBe(200);
    expect((await http.post(`${projectRoute}/publish`, {}, { bearer: project.ownerJwt })).body).toEqual({ publishedVersion: 2 });
    const after = await startRun(http, project, token, { orderId: 'after', amount: 5 });
    expect(await ended(after)).toMatchObject({ status: 'SUCCEEDED', definitionVersion: 2 });
    expect(await ended(delayed)).toMatchObject({ status: 'SUCCEEDED', result: { version: 2 }, definitionVersion: 2 });

    const page = await open();
    const cases: Array<[string, number, string[]]> = [
      [before, 1, ['total', 'decide', 'gate', 'refuse', 'done']],
      [after, 2, ['check', 'reply']],
      [delayed, 2, ['check', 'reply']],
    ];
    for (const [invocationId, version, nodes] of cases) {
      await page.goto(signInLink(base, project.ownerJwt, `organizations/${project.orgId}/projects/${project.projectId}/runs/${invocationId}`));
      await page.getByRole('heading', { name: `Graph (definition version ${version})` }).waitFor();
      await page.locator('.flow-node-succeeded').first().waitFor();
      expect((await page.locator('.react-flow__node .flow-node-id').allTextContents()).sort()).toEqual([...nodes].sort());
    }
  }, 90_000);

  it('renders and lays out the definition page of a 200-node flow (goal 1 s), and logs the time', async () => {
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Large' }, { bearer: jwt });
    const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Large', type: 'AUTOMATION' }, { bearer: jwt });
    const saved = await http.put(`/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}/definition`, { definition: largeDefinition(200) }, { bearer: jwt });
    expect(saved.status).toBe(200);
    const page = await open();
    // Signed in on the organizations page first, so the timing is of the definition page alone.
    await page.goto(signInLink(base, jwt));
    await page.getByRole('heading', { name: 'Organizations and projects' }).waitFor();
    const timings: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.goto(`${base}/console/organizations/${org.body.orgId}/projects/${project.body.projectId}/definition`);
      // From the navigation's start to the frame where all 200 nodes are placed by the layout.
      const [elapsed, dataShown] = await page.evaluate(
        () =>
          new Promise<[number, number]>((resolve) => {
            let shown = 0;
            const check = () => {
              if (!shown && document.querySelector('.definition-layout')) shown = performance.now();
              const nodes = document.querySelectorAll('.react-flow__node');
              const placed = nodes.length === 200 && [...nodes].every((node) => (node as HTMLElement).style.transform !== '' && getComputedStyle(node).visibility !== 'hidden');
              if (placed && document.querySelector('.definition-editor')?.shadowRoot?.querySelector('.cm-content')) resolve([performance.now(), shown]);
              else requestAnimationFrame(check);
            };
            check();
          }),
      );
      timings.push(elapsed);
      console.log(`definition page, 200 nodes: data on the page at ${Math.round(dataShown)} ms, graph laid out at ${Math.round(elapsed)} ms`);
    }
    timings.sort((a, b) => a - b);
    console.log(`definition page, 200 nodes: rendered and laid out in ${timings.map((t) => `${Math.round(t)} ms`).join(', ')}`);
    // The goal is 1 s (the median of three loads). On a machine shared with other suites the
    // test holds 5 s, which only a pathological layout or render breaks; CONSOLE_TIMING_GOAL=1
    // holds the goal itself (the figure above is logged either way).
    expect(timings[1]).toBeLessThanOrEqual(process.env.CONSOLE_TIMING_GOAL === '1' ? 1000 : 5000);
  }, 90_000);
});
