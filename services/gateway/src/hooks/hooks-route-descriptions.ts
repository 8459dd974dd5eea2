import { consolePipeline, projectRoute, type RouteDescription, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './hooks-examples.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { HOOK_MESSAGES } from './hook-messages.js';
import { RUN_MESSAGES } from '../runs/index.js';
import { QUOTA_EXCEEDED_MESSAGE } from '@runline/contracts';
import { BODY_ERRORS } from '../platform/json/json-object.js';

/** The hooks routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const HOOKS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- Inbound hooks (DESIGN section 9): any method is routed, only POST is accepted.
  'ALL /v1/hooks/{id}': {
    summary: 'Receives a signed delivery and starts a run of the hook’s project',
    description:
      'Starts an async run of the hook’s project with the JSON body (a chatbot’s flow with the top-level fields as payload, an automation’s workflow with the body as payload) and answers 202. ' +
      'Signed with the hook’s secret: `X-Runline-Signature: sha256=<hex HMAC-SHA256>` of the raw body, or of `<timestamp>.<raw body>` with `X-Runline-Timestamp` (within 300 s). ' +
      'A managed subscription’s `endpoint` is this URL too: its provider signs with its own scheme (`Stripe-Signature`, `X-Shopify-Hmac-Sha256`, `X-Hub-Signature-256`), and only the subscribed events start runs. ' +
      'A repeated `X-Runline-Delivery` within 24 h answers 409 and runs nothing. A body that fails the trigger check answers 422 and is kept as a dead letter. ' +
      `Only POST is accepted: any other method on this URL answers 405 \`${HOOK_MESSAGES.methodNotAllowed}\` with \`Allow: POST\` (those methods are not listed as operations, having no successful answer).`,
    tag: 'Inbound hooks',
    requestExample: REQUESTS.hookDelivery,
    responses: {
      202: { description: 'Accepted: the run started.', schema: 'HookAccepted', example: ANSWERS.hookAccepted },
      400: { description: 'The body is not JSON.', messages: [BODY_ERRORS.notJson, BODY_ERRORS.notObject] },
      401: { description: 'Missing or wrong signature, or a stale timestamp.', messages: [HOOK_MESSAGES.invalidSignature, HOOK_MESSAGES.staleTimestamp] },
      403: { description: 'The project switched its external API off.', messages: [API_ERRORS.externalApiDisabled] },
      404: { description: 'No such hook.', messages: [HOOK_MESSAGES.notFound] },
      409: { description: 'This `X-Runline-Delivery` was received within 24 h: the first run’s `invocationId`.', schema: 'HookRepeated', messages: [HOOK_MESSAGES.deliveryRepeated] },
      410: { description: 'The hook was revoked.', messages: [HOOK_MESSAGES.revoked] },
      413: { description: 'Body over 256 KiB.', messages: [API_ERRORS.webhookPayloadTooLarge] },
      422: { description: 'The trigger check failed; the body is kept as a dead letter.', schema: 'HookRejected' },
      429: { description: 'The hook’s rate limit, or the organization’s quota.', schema: { anyOf: [ref('Error'), ref('QuotaError')] }, messages: [API_ERRORS.rateLimitExceeded, QUOTA_EXCEEDED_MESSAGE] },
      500: { description: 'The run could not be started; the sender retries.', messages: [RUN_MESSAGES.runNotStarted] },
      ...unavailable('webhook', 'invocation'),
    },
  },

  // ---- Console: inbound hooks (DESIGN section 9).
  [`POST ${projectRoute}/webhooks`]: {
    summary: 'Creates an inbound hook (its secret is shown once)',
    description: 'Creates a URL (`url`, under PUBLIC_BASE_URL) that starts a run of the project for each delivery signed with `secret`, which is generated when not given and shown only here. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    requestExample: REQUESTS.createWebhook,
    responses: { 201: { description: 'Created.', schema: 'CreatedInboundHook', example: ANSWERS.createdHook }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable('webhook') },
  },
  [`GET ${projectRoute}/webhooks`]: {
    summary: 'The project’s inbound hooks (no secrets)',
    description: 'Each hook with its URL, status and rate limit; never its secret. Caller: any member.',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The hooks.', schema: listOf(ref('InboundHook')), example: ANSWERS.hooks }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`DELETE ${projectRoute}/webhooks/{hookId}`]: {
    summary: 'Revokes an inbound hook; its URL then answers 410',
    description: 'Revokes the hook: deliveries to its URL answer 410 from then on. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: { 204: { description: 'Revoked.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [HOOK_MESSAGES.notFound]), ...unavailable('webhook') },
  },
};
