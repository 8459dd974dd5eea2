/**
 * What an inbound hook refuses with (DESIGN section 9). `Method not allowed` and the 422's
 * `Trigger check failed` are ours. The 413 is platform's (API_ERRORS.webhookPayloadTooLarge): the
 * exception filter answers it before this folder's controller runs.
 */
export const HOOK_MESSAGES = {
  notFound: 'Webhook not found',
  revoked: 'Webhook has been revoked',
  invalidSignature: 'Invalid signature',
  staleTimestamp: 'Timestamp outside the tolerance',
  deliveryRepeated: 'Delivery already received',
  methodNotAllowed: 'Method not allowed',
} as const;
