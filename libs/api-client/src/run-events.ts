import type { components } from './schema.js';
import type { RunlineAuth } from './auth.js';

/** One event of a run's stream (GET /v1/orgs/{orgId}/external-invocations/{invocationId}/events). */
export type RunEvent =
  | { id: number; event: 'status'; data: { status: string; at: string } }
  | { id: number; event: 'step'; data: { step: Record<string, unknown> } }
  | { id: number; event: 'message'; data: { text: string } }
  | { id: number; event: 'end'; data: components['schemas']['Invocation'] };

export interface FollowRunOptions {
  orgId: string;
  invocationId: string;
  /** Start after this event (the id of the last event you handled); from the first event without it. */
  lastEventId?: number;
  /** Stops following (the generator then ends). */
  signal?: AbortSignal;
  /** Reconnections after a dropped connection before giving up (default 5); each resumes after the last event. */
  maxReconnects?: number;
  /** Wait before a reconnection, ms (default 1000). */
  reconnectDelayMs?: number;
  fetch?: typeof fetch;
}

/** A refusal of the stream (the same answers as GET of the run): its status and body. */
export class RunEventsError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`run events refused: ${status} ${JSON.stringify(body)}`);
    this.name = 'RunEventsError';
  }
}

/**
 * Follows one run as it happens: yields its events in order, once each, until `end`. A dropped
 * connection is resumed with `Last-Event-ID` (on whichever gateway answers), so nothing is lost
 * or repeated; a refusal throws RunEventsError.
 *
 *   for await (const event of followRun('https://runline.example.com', token, { orgId, invocationId })) {
 *     if (event.event === 'status') console.log(event.data.status);
 *     if (event.event === 'end') console.log(event.data.result);
 *   }
 */
export async function* followRun(baseUrl: string, auth: RunlineAuth, options: FollowRunOptions): AsyncGenerator<RunEvent> {
  const fetchImpl = options.fetch ?? fetch;
  const url = `${baseUrl.replace(/\/+$/, '')}/v1/orgs/${encodeURIComponent(options.orgId)}/external-invocations/${encodeURIComponent(options.invocationId)}/events`;
  let lastEventId = options.lastEventId;
  let reconnects = 0;
  for (;;) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (typeof auth === 'string') headers.authorization = `Bearer ${auth}`;
    else if (auth) headers['x-api-key'] = auth.apiKey;
    if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
    let ended = false;
    try {
      const response = await fetchImpl(url, { headers, signal: options.signal });
      // 204: resumed after `end`; nothing follows.
      if (response.status === 204) return;
      if (response.status !== 200 || !response.body) {
        const text = await response.text();
        throw new RunEventsError(response.status, text ? (JSON.parse(text) as unknown) : null);
      }
      for await (const event of eventsOf(response.body)) {
        lastEventId = event.id;
        reconnects = 0;
        yield event;
        if (event.event === 'end') ended = true;
      }
      if (ended) return;
    } catch (error) {
      if (error instanceof RunEventsError || options.signal?.aborted) throw error;
      if (++reconnects > (options.maxReconnects ?? 5)) throw error;
    }
    if (ended) return;
    await new Promise((resolve) => setTimeout(resolve, options.reconnectDelayMs ?? 1000));
  }
}

/** The events of a text/event-stream body (comments such as `: ping` are skipped). */
async function* eventsOf(body: ReadableStream<Uint8Array>): AsyncGenerator<RunEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: number | undefined;
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = Number(line.slice(3).trim());
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (id !== undefined && data.length > 0) yield { id, event, data: JSON.parse(data.join('\n')) } as RunEvent;
    }
  }
}
