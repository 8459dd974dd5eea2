import { All, Controller, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_HOOK_BODY_BYTES, ReceiveHookDeliveryHandler, type HookDeliveryResult } from './receive-hook-delivery.handler.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { HOOK_MESSAGES } from './hook-messages.js';
import { refusalAnswer } from '../platform/http-pipeline/api-exception.filter.js';
import { rawBodyOf } from '../platform/http-pipeline/body-parsing.js';
import { rateLimitHeaders } from '../platform/http-guards/rate-limit.guard.js';

/** Headers a delivery's verification never needs; they stay in the gateway. */
const NOT_FORWARDED = new Set(['authorization', 'cookie']);

/**
 * The public URL of an inbound hook, `/v1/hooks/{id}` (DESIGN section 9). No API token: the
 * delivery's signature is its credential. POST only (405 with `Allow: POST` otherwise); the
 * body is read raw, because the signature covers the bytes as sent.
 */
@Controller('v1/hooks')
export class HooksController {
  constructor(private readonly receive: ReceiveHookDeliveryHandler) {}

  @All(':id')
  async deliver(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string) {
    if (req.method !== 'POST') {
      void reply.header('allow', 'POST').status(405);
      return { error: HOOK_MESSAGES.methodNotAllowed };
    }
    const rawBody = rawBodyOf(req);
    if (rawBody.length > MAX_HOOK_BODY_BYTES) {
      void reply.status(413);
      return { error: API_ERRORS.webhookPayloadTooLarge };
    }
    const result = await this.receive.execute({ hookId: id, rawBody, headers: forwardedHeaders(req), receivedAt: new Date() });
    return answer(reply, result);
  }
}

function forwardedHeaders(req: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Each outcome's status and body; README "Inbound webhooks" lists them. */
function answer(reply: FastifyReply, result: HookDeliveryResult): Record<string, unknown> {
  const send = (status: number, body: Record<string, unknown>) => {
    void reply.status(status);
    return body;
  };
  switch (result.outcome) {
    case 'not-found':
      return send(404, { error: HOOK_MESSAGES.notFound });
    case 'revoked':
      return send(410, { error: HOOK_MESSAGES.revoked });
    case 'invalid-signature':
      return send(401, { error: HOOK_MESSAGES.invalidSignature });
    case 'stale-timestamp':
      return send(401, { error: HOOK_MESSAGES.staleTimestamp });
    case 'ignored':
      // A 2xx, or the provider retries it; README "Managed webhook subscriptions".
      return send(200, { ignored: true, reason: 'Event not subscribed' });
    case 'bad-body':
      return send(400, { error: result.message });
    case 'disabled':
      return send(403, { error: API_ERRORS.externalApiDisabled });
    case 'rate-limited':
      void reply.headers(rateLimitHeaders(result.policy, result.tally));
      return send(429, { error: API_ERRORS.rateLimitExceeded });
    case 'accepted':
      if (result.rateLimit) void reply.headers(rateLimitHeaders(result.rateLimit.policy, result.rateLimit.tally));
      return send(202, { invocationId: result.invocationId, status: result.status });
    case 'repeated':
      return send(409, { error: HOOK_MESSAGES.deliveryRepeated, invocationId: result.invocationId });
    case 'rejected':
      return send(422, { error: result.reasons.join('; '), reasons: result.reasons, invocationId: result.invocationId });
    case 'refused': {
      const refusal = refusalAnswer(result.refusal);
      if (refusal.headers) void reply.headers(refusal.headers);
      return send(refusal.status, refusal.body);
    }
  }
}
