import type { FastifyReply } from 'fastify';

/**
 * When Fastify received the request, to the millisecond: before the token checks and the body
 * validation, so `delaySeconds` counts from the moment the client's request arrived.
 */
export function receivedAtOf(reply: FastifyReply): Date {
  const now = Date.now();
  const elapsed = reply.elapsedTime;
  return new Date(Number.isFinite(elapsed) && elapsed >= 0 ? Math.floor(now - elapsed) : now);
}
