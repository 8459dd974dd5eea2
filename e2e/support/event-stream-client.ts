/** One server-sent event as a client reads it. */
export interface ReceivedEvent {
  id: number | null;
  event: string;
  data: unknown;
}

/** An open text/event-stream answer, read event by event. */
export interface OpenEventStream {
  status: number;
  headers: Headers;
  /** The events read so far, in order. */
  events: ReceivedEvent[];
  /** `: ping` comments read so far. */
  pings: number;
  /** Resolves once `count` events have arrived (or rejects after `timeoutMs`). */
  waitForEvents(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  /** Resolves when the server ends the answer. */
  closed: Promise<void>;
  /** Cuts the connection from the client's side (a dropped connection). */
  abort(): void;
}

/**
 * Opens `url` as a client of server-sent events would (fetch, read the body as it comes), with
 * `Authorization: Bearer` and, when given, `Last-Event-ID`. A non-200 answer is returned with
 * its body in `events[0].data`.
 */
export async function openEventStream(url: string, options: { bearer?: string; lastEventId?: number | string } = {}): Promise<OpenEventStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: ReceivedEvent[] = [];
  const stream: OpenEventStream = {
    status: response.status,
    headers: response.headers,
    events,
    pings: 0,
    waitForEvents: async () => events,
    closed: Promise.resolve(),
    abort: () => controller.abort(),
  };
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    if (text) events.push({ id: null, event: 'error', data: JSON.parse(text) as unknown });
    return stream;
  }
  const waiters: Array<() => void> = [];
  const notify = () => waiters.splice(0).forEach((wake) => wake());
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  stream.closed = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const parsed = parseBlock(block);
          if (parsed === 'ping') stream.pings += 1;
          else if (parsed) events.push(parsed);
          notify();
        }
      }
    } catch {
      // Aborted by the test.
    } finally {
      notify();
    }
  })();
  let finished = false;
  void stream.closed.then(() => (finished = true));
  stream.waitForEvents = (count, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`${count} events not received in ${timeoutMs} ms: ${JSON.stringify(events)}`)), timeoutMs);
      const check = () => {
        if (events.length >= count) {
          clearTimeout(deadline);
          resolve(events.slice());
        } else if (finished) {
          clearTimeout(deadline);
          reject(new Error(`the stream closed after ${events.length} events: ${JSON.stringify(events)}`));
        } else {
          waiters.push(check);
        }
      };
      check();
    });
  return stream;
}

function parseBlock(block: string): ReceivedEvent | 'ping' | null {
  let id: number | null = null;
  let event = 'message';
  const data: string[] = [];
  let comment = false;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comment = line.trim() === ': ping' || comment;
    else if (line.startsWith('id: ')) id = Number(line.slice(4));
    else if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length === 0) return comment ? 'ping' : null;
  return { id, event, data: JSON.parse(data.join('\n')) as unknown };
}
