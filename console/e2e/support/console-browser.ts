import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); CI installs it. Never a downloaded browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** The two widths the console must work at: a laptop and a phone. */
export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof WIDTHS;

/** Where the tests save screenshots (the README shows copies from docs/console/). */
export const SCREENSHOT_DIR = process.env.CONSOLE_SCREENSHOT_DIR ?? path.resolve(import.meta.dirname, '..', '..', '..', 'dist', 'console-screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: the console's browser tests drive Debian's Chromium. Install it with \`apt-get install chromium\` (.ci/run does), or set CHROMIUM_PATH.`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Errors the page logged or threw (a CSP refusal shows up here), for `expect(...).toEqual([])`. */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh browser context (empty storage: nobody signed in) at one of the two widths. */
export async function openConsolePage(browser: Browser, width: Width = 'desktop'): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: WIDTHS[width], permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  // Every wait of a journey is for something the console shows within seconds.
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on('console', (message) => {
    // A refused API call is logged by the browser as a failed resource; the page shows it itself.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, context, errors, close: () => context.close() };
}

/** `/console/#token=<jwt>`: the one-click sign-in `npm start` prints. */
export function signInLink(baseUrl: string, jwt: string, pathAfter = ''): string {
  return `${baseUrl}/console/${pathAfter}#token=${encodeURIComponent(jwt)}`;
}

/** Opens a console path signed in (through the fragment) and waits for its h1. */
export async function gotoSignedIn(page: Page, baseUrl: string, jwt: string, consolePath = ''): Promise<void> {
  await page.goto(signInLink(baseUrl, jwt, consolePath.replace(/^\//, '')));
  await page.locator('h1').first().waitFor();
}

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it stands (WCAG 2.x A and AA
 * rules and axe's best practices). axe is evaluated through the DevTools protocol, which the
 * page's Content-Security-Policy does not apply to, so the policy stays as strict as served.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/**
 * Waits until the page has made no request for 500 ms, open event streams aside: a page that
 * follows a run or a project's runs (`…/events`) keeps one request open for good, so the
 * network is never idle, though every read the page needs has come back.
 */
export async function requestsSettled(page: Page, quietMs = 500, timeoutMs = 15_000): Promise<void> {
  const open = new Set<unknown>();
  let lastChange = Date.now();
  const isStream = (url: string) => /\/events(\?|$)/.test(new URL(url).pathname + new URL(url).search);
  const started = (request: { url(): string }) => {
    if (isStream(request.url())) return;
    open.add(request);
    lastChange = Date.now();
  };
  const ended = (request: { url(): string }) => {
    if (open.delete(request)) lastChange = Date.now();
  };
  page.on('request', started);
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  try {
    await page.waitForLoadState('load');
    const deadline = Date.now() + timeoutMs;
    while (open.size > 0 || Date.now() - lastChange < quietMs) {
      if (Date.now() > deadline) throw new Error(`requests still open after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    page.off('request', started);
    page.off('requestfinished', ended);
    page.off('requestfailed', ended);
  }
}

/** Saves a full-page screenshot as `<name>-<width>.png` in SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  const file = path.join(SCREENSHOT_DIR, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
