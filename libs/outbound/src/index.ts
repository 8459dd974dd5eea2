/**
 * `@runline/outbound`: the guard every outbound HTTP request goes through (http nodes of runs,
 * callbacks, polls), so that no project can make Runline reach into its own network.
 *
 * - `OutboundGuard.request` refuses any URL whose host is, or resolves to, an address that is
 *   not public unicast (unless `allowedCidrs` covers it, from `OUTBOUND_ALLOWED_CIDRS`), then
 *   connects to exactly the addresses it checked. No redirects are followed; total time and
 *   response size are capped; `httpsOnly` refuses `http:` (callbacks).
 * - `OutboundGuard.check` runs the same URL and address checks without sending, for validating a
 *   callback URL when it is configured.
 * - Every failure is an `OutboundError` with a `code` and a message safe to show a customer;
 *   refusals are `OutboundRefusedError` (code `REFUSED`).
 * - Each request runs in a CLIENT span of its own (named by `OutboundRequest.span`, else the
 *   method), child of the active span, and sends that span's W3C `traceparent`: a new span id
 *   for every request, also when no exporter records spans.
 * - `isPublicUnicast` and `parseAllowedCidrs` are the address rules on their own.
 */
export {
  OutboundGuard,
  type OutboundGuardOptions,
  type OutboundRequest,
  type OutboundResponse,
} from './outbound.guard.js';
export { OutboundError, OutboundRefusedError, type OutboundErrorCode } from './outbound.error.js';
export { type OutboundSpan } from './outbound-tracing.js';
export { isPublicUnicast, parseAllowedCidrs, type AllowedCidr } from './address.policy.js';
