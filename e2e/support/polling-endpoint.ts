import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a scripted path answers to its n-th call (1-based): JSON unless `raw` is given. */
export interface ScriptedReply {
  status?: number;
  json?: unknown;
  raw?: string;
}

export interface RecordedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real customer endpoint on loopback for polling tests: each path answers from its own script
 * (by call number; the last entry repeats), and every call is recorded with its headers, body
 * and arrival time. POSTs to /seen/<name> are how test flows report the payload they saw.
 */
export class PollingEndpoint {
  readonly calls: RecordedCall[] = [];
  private readonly scripts = new Map<string, (call: number) => ScriptedReply>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<PollingEndpoint> {
    const holder: { endpoint?: PollingEndpoint } = {};
    const server = createServer((request, response) => {
      const endpoint = holder;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = (request.url ?? '').split('?')[0] ?? '';
        endpoint.endpoint!.calls.push({ method: request.method ?? '', path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const count = endpoint.endpoint!.calls.filter((call) => call.path === path).length;
        const reply = endpoint.endpoint!.scripts.get(path)?.(count) ?? { status: 200, json: { ok: true } };
        response.writeHead(reply.status ?? 200, { 'content-type': reply.raw === undefined ? 'application/json' : 'text/plain' });
        response.end(reply.raw ?? JSON.stringify(reply.json ?? null));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.endpoint = new PollingEndpoint(server, `http://127.0.0.1:${port}`);
    return holder.endpoint;
  }

  /** Answers on `path` by call number; calls past the end get the last reply. */
  script(path: string, replies: ScriptedReply[]): string {
    this.scripts.set(path, (call) => replies[Math.min(call, replies.length) - 1] ?? { status: 200, json: [] });
    return `${this.url}${path}`;
  }

  callsTo(path: string): RecordedCall[] {
    return this.calls.filter((call) => call.path === path);
  }

  /** Payloads the test flow reported for `name` (POST /seen/<name>). */
  seen(name: string): Array<Record<string, unknown>> {
    return this.callsTo(`/seen/${name}`).map((call) => JSON.parse(call.body) as Record<string, unknown>);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** A chatbot whose flow POSTs the payload it sees to `<endpoint>/seen/<payload._pollKey>`. */
export function reportingChatbot(endpointUrl: string): object {
  return {
    schemaVersion: 1,
    bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi', next: 'end' }, end: { type: 'end' } } },
    flow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'report',
      nodes: {
        report: { type: 'http', method: 'POST', url: `${endpointUrl}/seen/{{ payload._pollKey }}`, body: 'payload', saveAs: 'reply', next: 'done' },
        done: { type: 'end' },
      },
    },
  };
}

/** A chatbot whose flow always fails with `error`. */
export function failingChatbot(error: string): object {
  return {
    schemaVersion: 1,
    bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi', next: 'end' }, end: { type: 'end' } } },
    flow: { trigger: { externalEnabled: true, key: 'external_event' }, start: 'boom', nodes: { boom: { type: 'fail', error } } },
  };
}
