import { inSpan } from '@runline/observability';
import { OutboundError, type OutboundGuard } from '@runline/outbound';
import { callbackHeaders } from './callback-signature.js';
import { ACK_WINDOW_MS } from './delivery-rules.js';
import type { AttemptOutcomeName, ClaimedDelivery } from './callback-deliveries.repository.js';

/** What one attempt came to, before it is recorded. */
export interface AttemptResult {
  attemptedAt: Date;
  durationMs: number;
  outcome: AttemptOutcomeName;
  statusCode: number | null;
  error: string | null;
}

/**
 * One POST of the callback through the outbound guard: HTTPS only, the checked address is the
 * one connected to, no redirects (a 3xx is an answer, so a failure), the answer capped in size,
 * and 10 s for the whole exchange. Any 2xx acknowledges. Never throws: every failure is an
 * outcome the run's callbackAttempts shows.
 */
export function attemptDelivery(
  guard: OutboundGuard,
  delivery: ClaimedDelivery,
  secret: string | null,
  maxResponseBytes: number,
): Promise<AttemptResult> {
  // Every attempt, the first or a retry hours later, belongs to the trace of the run that asked
  // for the callback (stored with the delivery); the receiver gets that trace's traceparent.
  const attributes = { 'runline.invocation_id': delivery.invocationId, 'runline.callback.attempt': delivery.attemptsMade + 1 };
  return inSpan('callback attempt', { parent: delivery.traceparent, service: 'callback', attributes }, async (span) => {
    const result = await attempt(guard, delivery, secret, maxResponseBytes);
    span.setAttribute('runline.callback.outcome', result.outcome);
    return result;
  });
}

async function attempt(
  guard: OutboundGuard,
  delivery: ClaimedDelivery,
  secret: string | null,
  maxResponseBytes: number,
): Promise<AttemptResult> {
  const attemptedAt = new Date();
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const response = await guard.request({
      method: 'POST',
      url: delivery.url,
      headers: callbackHeaders(delivery, secret, attemptedAt),
      body: delivery.body,
      timeoutMs: ACK_WINDOW_MS,
      httpsOnly: true,
      maxResponseBytes,
      span: { name: 'callback POST' },
    });
    const acknowledged = response.status >= 200 && response.status < 300;
    return {
      attemptedAt,
      durationMs: took(),
      outcome: acknowledged ? 'ACKNOWLEDGED' : 'HTTP_ERROR',
      statusCode: response.status,
      error: acknowledged ? null : httpError(response.status),
    };
  } catch (error) {
    return { attemptedAt, durationMs: took(), statusCode: null, ...failure(error) };
  }
}

function httpError(status: number): string {
  if (status >= 300 && status < 400) return `receiver answered ${status}; redirects are not followed`;
  return `receiver answered ${status}`;
}

function failure(error: unknown): { outcome: AttemptOutcomeName; error: string } {
  if (!(error instanceof OutboundError)) return { outcome: 'CONNECTION_ERROR', error: 'delivery failed' };
  switch (error.code) {
    case 'TIMEOUT':
      return { outcome: 'TIMEOUT', error: `no answer within ${ACK_WINDOW_MS / 1000} s` };
    case 'REFUSED':
      return { outcome: 'REFUSED', error: error.message };
    case 'NETWORK':
      // The guard names TLS failures in its (customer-safe) message.
      return { outcome: / TLS /.test(` ${error.message} `) ? 'TLS_ERROR' : 'CONNECTION_ERROR', error: error.message };
    default:
      return { outcome: 'CONNECTION_ERROR', error: error.message };
  }
}
