import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** A self-signed certificate for 127.0.0.1, made with openssl; `caFile` is for NODE_EXTRA_CA_CERTS. */
export interface TestCertificate {
  key: string;
  cert: string;
  caFile: string;
  dir: string;
  remove(): Promise<void>;
}

export async function selfSignedCertificate(): Promise<TestCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'runline-callback-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  await promisify(execFile)('/usr/bin/openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=runline-test-receiver', '-addext', 'subjectAltName=IP:127.0.0.1',
  ]);
  const cert = await readFile(certFile, 'utf8');
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, cert);
  return { key: await readFile(keyFile, 'utf8'), cert, caFile, dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** One request as the receiver saw it: the raw bytes, before any parsing. */
export interface ReceivedCallback {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** performance.timeOrigin-based time the request (headers and body) arrived, ms. */
  at: number;
}

/** What the receiver answers to the n-th request (1-based) on a path. */
export interface ReceiverReply {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` */
  url: string;
  received: ReceivedCallback[];
  on(path: string, reply: (call: number) => ReceiverReply): void;
  /** Requests received on `path`. */
  at(path: string): ReceivedCallback[];
  close(): Promise<void>;
}

/** A customer's callback receiver: HTTPS on loopback (`host`) with the given certificate. Unknown paths answer 200. */
export async function startHttpsReceiver(certificate: Pick<TestCertificate, 'key' | 'cert'>, host = '127.0.0.1'): Promise<HttpsReceiver> {
  const received: ReceivedCallback[] = [];
  const replies = new Map<string, (call: number) => ReceiverReply>();
  const counts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, method: req.method ?? '', headers: req.headers, raw: Buffer.concat(chunks), at: performance.timeOrigin + performance.now() });
      const call = (counts.get(path) ?? 0) + 1;
      counts.set(path, call);
      const reply = replies.get(path)?.(call) ?? { status: 200 };
      const send = () => {
        if (!res.destroyed) res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end('{"received":true}');
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, reply.delayMs);
        timers.add(timer);
      } else send();
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://${host}:${port}`,
    received,
    on: (path, reply) => void replies.set(path, reply),
    at: (path) => received.filter((request) => request.path === path),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A receiver that reads each request, starts a 200 answer and cuts the connection halfway through its body. */
export interface CuttingReceiver {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** Requests whose answer was cut. */
  cuts(): number;
  close(): Promise<void>;
}

export async function startCuttingReceiver(certificate: Pick<TestCertificate, 'key' | 'cert'>): Promise<CuttingReceiver> {
  let cuts = 0;
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req: IncomingMessage, res) => {
    req.resume();
    req.on('end', () => {
      cuts += 1;
      // The head promises 64 bytes; 10 are sent, then the socket goes.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '64' });
      res.write('{"received', () => res.socket?.destroy());
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    cuts: () => cuts,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
