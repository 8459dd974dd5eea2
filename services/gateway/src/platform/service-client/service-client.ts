import { Inject, Injectable } from '@nestjs/common';
import { BUS, isUnanswered, type Bus } from '@runline/bus';
import { GatewayConfig } from '../../config.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';

/** The services the gateway asks, and what the client is told when one does not answer. */
export const SERVICE_UNAVAILABLE = {
  invocation: API_ERRORS.invocationServiceUnavailable,
  // Ours (the spec has none).
  polling: 'Polling service unavailable, retry shortly',
  deadLetter: 'Dead-letter service unavailable, retry shortly',
  webhook: 'Webhook service unavailable, retry shortly',
  scheduler: 'Scheduler service unavailable, retry shortly',
} as const;

export type ServiceName = keyof typeof SERVICE_UNAVAILABLE;


/**
 * The gateway's request/reply calls to the other services. A service that does not answer
 * within SERVICE_REQUEST_TIMEOUT_MS (or is not listening) is `unavailable` (retry shortly),
 * with that service's message; any other bus error is unexpected.
 */
@Injectable()
export class ServiceClient {
  private readonly timeoutMs: number;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.timeoutMs = config.SERVICE_REQUEST_TIMEOUT_MS;
  }

  /** How long `request` waits for an answer (SERVICE_REQUEST_TIMEOUT_MS). */
  get deadlineMs(): number {
    return this.timeoutMs;
  }

  async request(service: ServiceName, subject: string, request: Uint8Array): Promise<Uint8Array> {
    try {
      return await this.bus.request(subject, request, { timeoutMs: this.timeoutMs });
    } catch (error) {
      if (isUnanswered(error)) throw new DomainError('unavailable', SERVICE_UNAVAILABLE[service]);
      throw error;
    }
  }

  /**
   * The bare call, for a caller that treats a silent service its own way: starting a run
   * returns its outcome instead of throwing, and a change handed to the services that keep
   * copies is fine when one is not deployed. `isUnanswered` tells a silent service from a
   * broken call.
   */
  send(subject: string, request: Uint8Array, timeoutMs = this.timeoutMs): Promise<Uint8Array> {
    return this.bus.request(subject, request, { timeoutMs });
  }
}
