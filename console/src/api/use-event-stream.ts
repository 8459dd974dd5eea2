import { useEffect, useRef, useState } from 'react';
import { useSession } from '../session/session-context.js';

/** How a followed stream is doing: `broken` when it could not be kept open (the page polls instead). */
export type StreamState = 'off' | 'connecting' | 'open' | 'ended' | 'broken';

/** Connections that fail in a row before the stream counts as broken (a proxy that buffers or cuts it). */
const ATTEMPTS_BEFORE_BROKEN = 3;
/** Wait before a reconnection, ms. */
const RECONNECT_DELAY_MS = 1_000;

/**
 * Follows a text/event-stream of the API (a run's `…/events`, a project's `…/runs/events`) for
 * the signed-in user: calls `onEvent` with each event's name and data, in order. A dropped
 * connection is resumed with `Last-Event-ID` (so nothing is missed or repeated); after
 * ATTEMPTS_BEFORE_BROKEN failures in a row, or an answer that is not a stream, the state is
 * `broken` and the caller falls back to polling. fetch, not EventSource: EventSource cannot send
 * the console JWT in `Authorization`. `path` null: follow nothing.
 */
export function useEventStream(path: string | null, onEvent: (event: string, data: unknown) => void): StreamState {
  const { token } = useSession();
  const [state, setState] = useState<StreamState>(path ? 'connecting' : 'off');
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    if (!path || !token) {
      setState('off');
      return;
    }
    const controller = new AbortController();
    let lastEventId: string | null = null;
    let failures = 0;
    const follow = async () => {
      while (!controller.signal.aborted) {
        setState('connecting');
        let ended = false;
        try {
          const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
          if (lastEventId) headers['last-event-id'] = lastEventId;
          const response = await fetch(path, { headers, signal: controller.signal });
          if (response.status === 204) return setState('ended');
          if (!response.ok || !response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
            // A refusal or a proxy's page: a stream will not come, polling will say why.
            return setState('broken');
          }
          setState('open');
          failures = 0;
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const parsed = parseEvent(block);
              if (!parsed) continue;
              if (parsed.id !== null) lastEventId = parsed.id;
              if (parsed.event === 'end') ended = true;
              handler.current(parsed.event, parsed.data);
            }
          }
        } catch {
          if (controller.signal.aborted) return;
        }
        if (ended) return setState('ended');
        if (++failures >= ATTEMPTS_BEFORE_BROKEN) return setState('broken');
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      }
    };
    void follow();
    return () => controller.abort();
  }, [path, token]);

  return state;
}

function parseEvent(block: string): { id: string | null; event: string; data: unknown } | null {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length === 0) return null;
  try {
    return { id, event, data: JSON.parse(data.join('\n')) as unknown };
  } catch {
    return null;
  }
}
