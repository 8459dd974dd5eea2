import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { CONSOLE_CSP, registerConsoleSite } from './console-site.js';
import { findConsoleFiles } from './console-files.js';

describe('the console site', () => {
  let root: string;
  let fastify: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'console-site-'));
    await mkdir(path.join(root, 'assets'));
    await writeFile(path.join(root, 'index.html'), '<!doctype html><div id="root"></div>');
    await writeFile(path.join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
    await writeFile(path.join(root, 'assets', 'index-abc123.js.gz'), gzipSync('console.log(1)'));
    await writeFile(path.join(root, 'robots.txt'), 'User-agent: *');
    await writeFile(path.join(path.dirname(root), 'outside-console-site.txt'), 'secret');
    fastify = Fastify();
    registerConsoleSite(fastify, root);
    // A route another feature adds under /console/ wins over the app's catch-all.
    fastify.get('/console/explicit.json', () => ({ explicit: true }));
    base = await fastify.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await fastify.close();
    await rm(root, { recursive: true, force: true });
    await rm(path.join(path.dirname(root), 'outside-console-site.txt'), { force: true });
  });

  /** A real request over HTTP; `headers` as a plain object, `body` as text. */
  async function get(url: string, on = base, headers: Record<string, string> = {}) {
    const response = await fetch(`${on}${url}`, { redirect: 'manual', headers });
    const body = await response.text();
    return { statusCode: response.status, headers: Object.fromEntries(response.headers), body, json: () => JSON.parse(body) as unknown };
  }

  it('redirects / and /console to /console/', async () => {
    for (const url of ['/', '/console']) {
      const answer = await get(url);
      expect([answer.statusCode, answer.headers.location]).toEqual([302, '/console/']);
    }
  });

  it("answers the app's page for every page address, revalidated, with the Content-Security-Policy", async () => {
    for (const url of ['/console/', '/console/organizations/o-1/projects/p-1/logs?status=FAILED', '/console/sign-in']) {
      const answer = await get(url);
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('<div id="root"></div>');
      expect(answer.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': CONSOLE_CSP,
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
      });
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets for a year, immutable, and other built files revalidated', async () => {
    const asset = await get('/console/assets/index-abc123.js');
    expect([asset.statusCode, asset.body, asset.headers['cache-control']]).toEqual([200, 'console.log(1)', 'public, max-age=31536000, immutable']);
    expect(asset.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    // The build's compressed copy, to a client that accepts it (fetch inflates it again).
    const compressed = await get('/console/assets/index-abc123.js', base, { 'accept-encoding': 'gzip' });
    expect([compressed.body, compressed.headers['content-encoding'], compressed.headers['cache-control']]).toEqual(['console.log(1)', 'gzip', 'public, max-age=31536000, immutable']);
    const robots = await get('/console/robots.txt');
    expect([robots.statusCode, robots.headers['cache-control']]).toEqual([200, 'no-cache']);
  });

  it('answers 404 for a file that is not there, and never leaves the folder', async () => {
    for (const url of ['/console/assets/missing.js', '/console/config.json', '/console/assets/../../outside-console-site.txt', '/console/..%2Foutside-console-site.txt', '/console/.hidden.txt']) {
      const answer = await get(url);
      expect([url, answer.statusCode]).toEqual([url, 404]);
      expect(answer.body).not.toContain('secret');
    }
  });

  it('lets a route named explicitly under /console/ win over the catch-all', async () => {
    const answer = await get('/console/explicit.json');
    expect([answer.statusCode, answer.json()]).toEqual([200, { explicit: true }]);
  });

  it('answers 503 with what to do when the console is not built', async () => {
    const bare = Fastify();
    registerConsoleSite(bare, null);
    const answer = await get('/console/', await bare.listen({ port: 0, host: '127.0.0.1' }));
    expect([answer.statusCode, answer.json()]).toEqual([503, { error: 'The console is not built: run `npm run build`' }]);
    await bare.close();
  });

  it('finds the built console from the compiled gateway and from its source', async () => {
    const workspace = await mkdtemp(path.join(tmpdir(), 'console-files-'));
    await mkdir(path.join(workspace, 'dist', 'console'), { recursive: true });
    await writeFile(path.join(workspace, 'dist', 'console', 'index.html'), '');
    const compiled = path.join(workspace, 'dist', 'services', 'gateway', 'src', 'http', 'console-site');
    const source = path.join(workspace, 'services', 'gateway', 'src', 'http', 'console-site');
    expect(findConsoleFiles(compiled)).toBe(path.join(workspace, 'dist', 'console'));
    expect(findConsoleFiles(source)).toBe(path.join(workspace, 'dist', 'console'));
    await rm(workspace, { recursive: true, force: true });
  });
});
