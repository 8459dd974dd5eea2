import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpCall, HttpReply, RunPorts } from '@runline/engine';
import type { OutboundGuard } from '@runline/outbound';

/**
 * What the run engine is lent: the real clock, a watchdog, and HTTP through the outbound guard
 * (public addresses only, no redirects, capped time and size).
 */
export function engineRunPorts(outbound: OutboundGuard): RunPorts {
  return {
    now: Date.now,
    sleep: (ms, signal) => sleep(ms, undefined, { signal }),
    http: (call) => guardedHttp(outbound, call),
  };
}

async function guardedHttp(outbound: OutboundGuard, call: HttpCall): Promise<HttpReply> {
  const response = await outbound.request({
    method: call.method,
    url: call.url,
    headers: { ...call.headers },
    body: call.body,
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    // The request's own span, child of the run's: its traceparent names it.
    span: call.nodeId === undefined ? { name: 'http node' } : { name: `http node ${call.nodeId}`, attributes: { 'runline.node_id': call.nodeId } },
  });
  return { status: response.status, headers: response.headers, body: parseBody(response.headers['content-type'], response.body) };
}

/** JSON when the answer says so (and parses), else text; null when empty. */
function parseBody(contentType: string | undefined, body: Buffer): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (contentType && /\bjson\b/i.test(contentType)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
