import { isUnanswered } from '@runline/bus';
import { SERVICE_UNAVAILABLE, type ServiceClient } from '../platform/service-client/service-client.js';
import type { GatewayConfig } from '../config.js';
import { DomainError } from '../platform/errors/domain-error.js';

/** What the gateway waits beyond the provider budget: the webhook service's own reads and writes. */
const MARGIN_MS = 5000;

/**
 * A subscription command that talks to a provider: the webhook service may take up to
 * WEBHOOK_PROVIDER_BUDGET_MS on it (retries and Retry-After waits included), so the gateway
 * waits that long and a little more, not SERVICE_REQUEST_TIMEOUT_MS.
 */
export async function providerCall(services: ServiceClient, config: GatewayConfig, subject: string, request: Uint8Array): Promise<Uint8Array> {
  try {
    return await services.send(subject, request, config.WEBHOOK_PROVIDER_BUDGET_MS + MARGIN_MS);
  } catch (error) {
    if (isUnanswered(error)) throw new DomainError('unavailable', SERVICE_UNAVAILABLE.webhook);
    throw error;
  }
}
