import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JetStreamBus, type Bus, type Subscription } from '@runline/bus';
import { decodeEnvelope, STREAM_NAMES, STREAM_SUBJECTS, unpackPayloadAs, type Envelope, type EventPayload, type EventType } from '@runline/contracts';
import { testNatsUrl, uniqueSuffix, type HttpClient } from '@runline/testing';

/** What a customer endpoint answers to its n-th call (1-based). */
export interface LocalReply {
  status: number;
  body?: unknown;
  /** Answer only after this long (a slow endpoint). */
  delayMs?: number;
}

export interface LocalServer {
  /** `http://127.0.0.1:<port>`; http nodes may reach it once OUTBOUND_ALLOWED_CIDRS allows loopback. */
  url: string;
  /** Calls received so far, in order. */
  calls: Array<{ method: string; path: string; body: string }>;
  close(): Promise<void>;
}

/**
 * A real customer endpoint on loopback. `reply` decides each answer; it may return a promise to
 * hold the call open until the test lets it go.
 */
export async function startLocalServer(reply: (call: number, request: IncomingMessage) => LocalReply | Promise<LocalReply>): Promise<LocalServer> {
  const calls: LocalServer['calls'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls.push({ method: request.method ?? '', path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      void Promise.resolve(reply(calls.length, request)).then(async (answer) => {
        if (answer.delayMs) await pause(answer.delayMs);
        if (response.destroyed) return;
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer.body ?? {}));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        // Calls still held open (slow or gated answers) must not keep the test process alive.
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A promise the test resolves by hand: holds a customer endpoint's answer until released. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export const FINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'];

export type InvocationBody = Record<string, unknown> & { invocationId: string; status: string };

/** Reads a run through the public API until its status is final (every 50 ms, 10 s by default). */
export async function waitForFinalInvocation(
  http: HttpClient,
  orgId: string,
  invocationId: string,
  token: string,
  timeoutMs = 10_000,
): Promise<InvocationBody> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const answer = await http.get<InvocationBody>(`/v1/orgs/${orgId}/external-invocations/${invocationId}`, { bearer: token });
    last = answer.body;
    if (answer.status === 200 && FINAL_STATUSES.includes(answer.body.status)) return answer.body;
    if (Date.now() > deadline) throw new Error(`run ${invocationId} did not finish within ${timeoutMs} ms; last answer ${answer.status} ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls `probe` until it returns a value other than undefined (every 50 ms). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One invocation event as an internal subscriber sees it. */
export interface RecordedEvent {
  subject: string;
  envelope: Envelope;
}

/**
 * An internal service's view of run transitions: its own durable consumer on INVOCATION_EVENTS
 * (filter `invocation.evt.>`), on a bus of its own with the test system's prefix, decoding each
 * message as an envelope. Deduplicates by envelope id, as the README asks subscribers to.
 */
export class InvocationEventRecorder {
  private readonly seen = new Set<string>();
  readonly events: RecordedEvent[] = [];
  readonly decodeErrors: string[] = [];

  private constructor(
    private readonly bus: Bus,
    private subscription: Subscription | null,
  ) {}

  static async start(busPrefix: string): Promise<InvocationEventRecorder> {
    const bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: busPrefix, name: 'e2e-event-recorder' });
    const recorder = new InvocationEventRecorder(bus, null);
    recorder.subscription = await bus.subscribe(
      { stream: STREAM_NAMES.INVOCATION_EVENTS, durable: `e2e-recorder-${uniqueSuffix()}`, filterSubject: STREAM_SUBJECTS.INVOCATION_EVENTS },
      async (message) => {
        try {
          const envelope = decodeEnvelope(message.data);
          if (!recorder.seen.has(envelope.id)) {
            recorder.seen.add(envelope.id);
            recorder.events.push({ subject: message.subject, envelope });
          }
        } catch (error) {
          recorder.decodeErrors.push(error instanceof Error ? error.message : String(error));
        }
        await message.ack();
      },
    );
    return recorder;
  }

  /** The events of one run, in the order they arrived. */
  of(invocationId: string): RecordedEvent[] {
    return this.events.filter((event) => event.envelope.invocationId === invocationId);
  }

  typesOf(invocationId: string): string[] {
    return this.of(invocationId).map((event) => event.envelope.type);
  }

  /** Waits until the run has an event of `type`; returns the first one. */
  waitFor(invocationId: string, type: EventType, timeoutMs = 10_000): Promise<RecordedEvent> {
    return eventually(`${type} of ${invocationId} (seen: ${this.typesOf(invocationId).join(', ') || 'none'})`, async () =>
      this.of(invocationId).find((event) => event.envelope.type === type),
    timeoutMs);
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    await this.bus.close();
  }
}

/** The decoded payload of a recorded event that must be of `type`. */
export function payloadOf<T extends EventType>(event: RecordedEvent | undefined, type: T): EventPayload<T> {
  if (!event) throw new Error(`no ${type} event`);
  return unpackPayloadAs(event.envelope, type);
}
