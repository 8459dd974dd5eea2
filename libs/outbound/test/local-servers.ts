import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';

/** What a local receiver saw of one request. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  remoteAddress: string | undefined;
  /** The SNI name a TLS client sent; undefined over plain HTTP. */
  servername: string | undefined;
}

export interface LocalServer {
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted, including ones that never sent a full request. */
  connections: () => number;
  close: () => Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real HTTP (or, with `tls`, HTTPS) server on 127.0.0.1 that records every request. */
export async function startServer(handler: Handler, tls?: { key: string; cert: string }, host = '127.0.0.1'): Promise<LocalServer> {
  const received: ReceivedRequest[] = [];
  let connections = 0;
  const onRequest: Handler = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const socket = req.socket as Partial<TLSSocket>;
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        remoteAddress: req.socket.remoteAddress,
        servername: typeof socket.servername === 'string' ? socket.servername : undefined,
      });
      handler(req, res);
    });
  };
  const server = tls === undefined ? http.createServer(onRequest) : https.createServer(tls, onRequest);
  server.on('connection', () => {
    connections += 1;
  });
  if (tls !== undefined) server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const run = promisify(execFile);

/** A fresh self-signed certificate for `names` (DNS names) and 127.0.0.1, made with openssl. */
export async function selfSignedCertificate(names: readonly string[]): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'outbound-tls-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    const san = [...names.map((name) => `DNS:${name}`), 'IP:127.0.0.1'].join(',');
    await run('/usr/bin/openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1',
      '-subj', `/CN=${names[0] ?? 'localhost'}`, '-addext', `subjectAltName=${san}`,
    ]);
    return { key: await readFile(keyFile, 'utf8'), cert: await readFile(certFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
