import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { OutboundError, OutboundGuard, type OutboundGuardOptions } from '@runline/outbound';
import { selfSignedCertificate, startServer, type LocalServer } from './local-servers.js';

type Addresses = Array<{ address: string; family: 4 | 6 }>;

/** Fake DNS: `.test` names exist nowhere else, so a request that reaches a server went through it. */
function fakeDns(records: Record<string, string>) {
  const asked: string[] = [];
  const lookup = async (hostname: string): Promise<Addresses> => {
    asked.push(hostname);
    const address = records[hostname];
    if (address === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  return { asked, lookup };
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const servers: LocalServer[] = [];
async function serve(...args: Parameters<typeof startServer>): Promise<LocalServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const devOptions = (dns: ReturnType<typeof fakeDns>): OutboundGuardOptions => ({
  allowedCidrs: ['127.0.0.0/8'],
  lookup: dns.lookup,
});

describe('OutboundGuard against real local servers', () => {
  it('refuses a loopback server unless allowed, and never connects to it', async () => {
    const server = await serve((_req, res) => res.end('should not be reached'));
    const dns = fakeDns({ 'example.test': '127.0.0.1' });
    const guard = new OutboundGuard({ lookup: dns.lookup });

    const direct = await failure(guard.request({ method: 'GET', url: `http://127.0.0.1:${server.port}/` }));
    expect(direct).toMatchObject({ code: 'REFUSED', message: 'refused: 127.0.0.1 is a loopback address' });
    const named = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/` }));
    expect(named).toMatchObject({ code: 'REFUSED', message: 'refused: example.test resolves to 127.0.0.1, a loopback address' });
    const decimal = await failure(guard.request({ method: 'GET', url: `http://2130706433:${server.port}/` }));
    expect(decimal.code).toBe('REFUSED');

    expect(server.connections()).toBe(0);
  });

  it('connects to the vetted address with Host = the name, after exactly one lookup', async () => {
    const server = await serve((_req, res) => {
      res.setHeader('x-multi', ['a', 'b']);
      res.setHeader('set-cookie', ['one=1', 'two=2']);
      res.setHeader('Content-Type', 'text/plain');
      res.end('hello');
    });
    const dns = fakeDns({ 'example.test': '127.0.0.1' });
    const guard = new OutboundGuard(devOptions(dns));

    const body = new TextEncoder().encode('xx{"ok":true}xx').subarray(2, 13);
    const response = await guard.request({
      method: 'post',
      url: `http://example.test:${server.port}/hook?run=1`,
      headers: { 'Content-Type': 'application/json', Host: 'evil.test', 'X-Trace': 't-1' },
      body,
    });

    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('hello');
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.headers['x-multi']).toBe('a, b');
    expect(response.headers['set-cookie']).toBe('one=1, two=2');
    expect(dns.asked).toEqual(['example.test']);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({
      method: 'POST',
      url: '/hook?run=1',
      remoteAddress: '127.0.0.1',
      headers: expect.objectContaining({
        host: `example.test:${server.port}`,
        'content-type': 'application/json',
        'content-length': '11',
        'x-trace': 't-1',
      }),
    });
    expect(server.received[0]?.body.toString()).toBe('{"ok":true}');
  });

  it('returns a redirect as the answer and does not follow it', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: `http://example.test:${server.port}/next` }).end();
      } else {
        res.end('followed');
      }
    });
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const response = await guard.request({ method: 'GET', url: `http://example.test:${server.port}/start` });

    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`http://example.test:${server.port}/next`);
    expect(server.received.map((r) => r.url)).toEqual(['/start']);
  });

  it('times out a server that never answers', async () => {
    const server = await serve(() => undefined);
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const started = Date.now();
    const error = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/`, timeoutMs: 300 }));

    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'timed out after 300 ms' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(server.received).toHaveLength(1);
  });

  it('counts a body that trickles in against the same time cap', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const tick = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(tick));
    });
    const guard = new OutboundGuard({ ...devOptions(fakeDns({ 'example.test': '127.0.0.1' })), defaultTimeoutMs: 400 });

    const error = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/` }));

    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'timed out after 400 ms' });
  });

  it('caps the response size, declared or streamed, and accepts a body of exactly the cap', async () => {
    const server = await serve((req, res) => {
      const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size'));
      if (req.url?.startsWith('/declared')) {
        res.setHeader('content-length', String(size));
        res.end(Buffer.alloc(size, 'a'));
      } else {
        // Chunked, no length up front: the cap must hold while reading.
        for (let i = 0; i < size; i += 100) res.write(Buffer.alloc(Math.min(100, size - i), 'b'));
        res.end();
      }
    });
    const guard = new OutboundGuard({ ...devOptions(fakeDns({ 'example.test': '127.0.0.1' })), maxResponseBytes: 1000 });
    const base = `http://example.test:${server.port}`;

    for (const path of ['/declared', '/streamed']) {
      const tooLarge = await failure(guard.request({ method: 'GET', url: `${base}${path}?size=1001` }));
      expect(tooLarge).toMatchObject({ code: 'TOO_LARGE', message: 'response larger than 1000 bytes' });
      const exact = await guard.request({ method: 'GET', url: `${base}${path}?size=1000` });
      expect(exact.body.length).toBe(1000);
    }
    const perRequest = await failure(guard.request({ method: 'GET', url: `${base}/streamed?size=500`, maxResponseBytes: 499 }));
    expect(perRequest).toMatchObject({ code: 'TOO_LARGE', message: 'response larger than 499 bytes' });
  });

  it('applies the 1 MiB default cap', async () => {
    const server = await serve((_req, res) => res.end(Buffer.alloc(1024 * 1024 + 1)));
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const error = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/` }));

    expect(error).toMatchObject({ code: 'TOO_LARGE', message: 'response larger than 1048576 bytes' });
  });

  it('stops when the caller aborts', async () => {
    const server = await serve(() => undefined);
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);

    const started = Date.now();
    const error = await failure(
      guard.request({ method: 'GET', url: `http://example.test:${server.port}/`, signal: controller.signal }),
    );

    expect(error).toMatchObject({ code: 'ABORTED', message: 'request aborted' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('with httpsOnly refuses an http URL without connecting', async () => {
    const server = await serve((_req, res) => res.end());
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const error = await failure(
      guard.request({ method: 'POST', url: `http://example.test:${server.port}/`, httpsOnly: true, body: '{}' }),
    );

    expect(error).toMatchObject({ code: 'REFUSED', message: 'refused: only https URLs are allowed' });
    expect(server.connections()).toBe(0);
  });

  it('reports a closed port and a cut-off response as network errors', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setTimeout(() => res.destroy(), 20);
    });
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const cutOff = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/` }));
    expect(cutOff.code).toBe('NETWORK');
    expect(cutOff.message).toMatch(/^network error reaching example\.test: |^example\.test closed the connection/);

    await server.close();
    const refused = await failure(guard.request({ method: 'GET', url: `http://example.test:${server.port}/` }));
    expect(refused).toMatchObject({ code: 'NETWORK', message: 'network error reaching example.test: connection refused' });
  });
});

describe('OutboundGuard connection reuse', () => {
  it('reuses a connection only for the same vetted address and host name', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const dns = fakeDns({ 'one.test': '127.0.0.1', 'two.test': '127.0.0.1' });
    const guard = new OutboundGuard(devOptions(dns));

    for (let i = 0; i < 3; i++) await guard.request({ method: 'GET', url: `http://one.test:${server.port}/` });
    expect(server.connections()).toBe(1);
    await guard.request({ method: 'GET', url: `http://two.test:${server.port}/` });
    expect(server.connections()).toBe(2);
    // Every request is vetted again: the names were looked up each time.
    expect(dns.asked).toEqual(['one.test', 'one.test', 'one.test', 'two.test']);
    guard.close();
  });

  it('opens a fresh connection per request with keepAlive: false', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const guard = new OutboundGuard({ ...devOptions(fakeDns({ 'one.test': '127.0.0.1' })), keepAlive: false });
    for (let i = 0; i < 2; i++) await guard.request({ method: 'GET', url: `http://one.test:${server.port}/` });
    expect(server.connections()).toBe(2);
  });
});

describe('OutboundGuard and a kept-alive connection the server closed', () => {
  /**
   * A server that answers the first request of each connection, keeps the connection, and
   * resets it when a second request arrives on it: what a request meets when it goes out on a
   * pooled connection just as the server closes it (its keep-alive timeout).
   */
  async function resettingServer(): Promise<{ port: number; connections: () => number; resets: () => number; close: () => Promise<void> }> {
    let connections = 0;
    let resets = 0;
    const server = createTcpServer((socket) => {
      connections++;
      let seen = '';
      let answered = false;
      socket.on('data', (chunk: Buffer) => {
        if (answered) {
          resets++;
          socket.resetAndDestroy();
          return;
        }
        seen += chunk.toString('latin1');
        if (!seen.includes('\r\n\r\n')) return;
        answered = true;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      connections: () => connections,
      resets: () => resets,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('sends an idempotent request again, once, on a new connection', async () => {
    const server = await resettingServer();
    const guard = new OutboundGuard(devOptions(fakeDns({ 'one.test': '127.0.0.1' })));
    try {
      expect((await guard.request({ method: 'GET', url: `http://one.test:${server.port}/` })).status).toBe(200);
      expect((await guard.request({ method: 'GET', url: `http://one.test:${server.port}/` })).status).toBe(200);
      expect({ connections: server.connections(), resets: server.resets() }).toEqual({ connections: 2, resets: 1 });
    } finally {
      guard.close();
      await server.close();
    }
  });

  it('does not send a POST again: it fails with the connection reset, sent once', async () => {
    const server = await resettingServer();
    const guard = new OutboundGuard(devOptions(fakeDns({ 'one.test': '127.0.0.1' })));
    try {
      await guard.request({ method: 'POST', url: `http://one.test:${server.port}/`, body: '' });
      const error = await failure(guard.request({ method: 'POST', url: `http://one.test:${server.port}/`, body: '' }));
      expect(error).toMatchObject({ code: 'NETWORK', message: 'network error reaching one.test: connection reset' });
      expect({ connections: server.connections(), resets: server.resets() }).toEqual({ connections: 1, resets: 1 });
    } finally {
      guard.close();
      await server.close();
    }
  });
});

describe('OutboundGuard over HTTPS with a self-signed certificate', () => {
  let tls: { key: string; cert: string };
  beforeAll(async () => {
    tls = await selfSignedCertificate(['example.test']);
  });

  it('works when the certificate is trusted through `ca`, sending SNI and Host for the name', async () => {
    const server = await serve((_req, res) => res.end('secure'), tls);
    const guard = new OutboundGuard({ ...devOptions(fakeDns({ 'example.test': '127.0.0.1' })), ca: tls.cert });

    const response = await guard.request({ method: 'POST', url: `https://example.test:${server.port}/cb`, httpsOnly: true, body: '{}' });

    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('secure');
    expect(server.received[0]).toMatchObject({ servername: 'example.test', headers: expect.objectContaining({ host: `example.test:${server.port}` }) });
  });

  it('fails without `ca`: TLS verification is never turned off', async () => {
    const server = await serve((_req, res) => res.end('secure'), tls);
    const guard = new OutboundGuard(devOptions(fakeDns({ 'example.test': '127.0.0.1' })));

    const error = await failure(guard.request({ method: 'GET', url: `https://example.test:${server.port}/` }));

    expect(error.code).toBe('NETWORK');
    expect(error.message).toMatch(/^network error reaching example\.test: TLS certificate rejected \([A-Z_]+\)$/);
    expect(server.received).toHaveLength(0);
  });

  it('fails when the certificate is for another name', async () => {
    const server = await serve((_req, res) => res.end('secure'), tls);
    const guard = new OutboundGuard({ ...devOptions(fakeDns({ 'other.test': '127.0.0.1' })), ca: tls.cert });

    const error = await failure(guard.request({ method: 'GET', url: `https://other.test:${server.port}/` }));

    expect(error).toMatchObject({
      code: 'NETWORK',
      message: 'network error reaching other.test: TLS certificate does not match the host name',
    });
    expect(server.received).toHaveLength(0);
  });
});
