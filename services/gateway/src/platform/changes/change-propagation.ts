import { Inject, Injectable } from '@nestjs/common';
import { BusNoRespondersError, type BusMessage } from '@runline/bus';
import { INVOCATION_REQUEST_SUBJECTS, POLLING_REQUEST_SUBJECTS, SCHEDULER_REQUEST_SUBJECTS } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { GatewayConfig } from '../../config.js';
import { DomainError } from '../errors/domain-error.js';
import { ServiceClient } from '../service-client/service-client.js';

/** Our message (the spec has none): the change is committed but a service has not stored it yet. */
export const CHANGE_NOT_YET_APPLIED = 'The change was saved but is not yet in force everywhere; retry shortly';

/**
 * The services that keep copies of gateway data and act on them without a request from us: the
 * scheduler fires published schedules, so a publish is answered only once it holds them.
 */
const COPY_KEEPERS = [INVOCATION_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE, POLLING_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE, SCHEDULER_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE] as const;

/**
 * Makes a committed change in force everywhere before it is answered. The change's events are
 * handed to each service that keeps a copy (request/reply) and the answer waits until each has
 * stored them, so work those services start on their own (a poll, a scheduled start, a replay)
 * sees the change from the moment the client is answered. JetStream delivers the same events
 * again (the backstop); the receivers' inbox makes that a no-op.
 *
 * A service that is not deployed at all (no responders) has nothing to keep current; it reads
 * the events from its stream when it starts. One that does not answer in time gets the change
 * through JetStream later, and the client gets 503 meanwhile.
 */
@Injectable()
export class ChangePropagation {
  private readonly timeoutMs: number;

  constructor(
    private readonly services: ServiceClient,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.timeoutMs = config.CHANGE_PROPAGATION_TIMEOUT_MS;
  }

  async inForce(events: readonly BusMessage[]): Promise<void> {
    // Events of one change go out in commit order; each to all copy keepers at once.
    for (const event of events) {
      const deliveries = await Promise.allSettled(COPY_KEEPERS.map((subject) => this.deliver(subject, event)));
      const failed = deliveries.find((delivery): delivery is PromiseRejectedResult => delivery.status === 'rejected');
      if (failed) {
        this.logger.warn({ eventId: event.id, subject: event.subject, err: failed.reason }, 'a change was committed but not applied by every service in time');
        throw new DomainError('unavailable', CHANGE_NOT_YET_APPLIED);
      }
    }
  }

  private async deliver(subject: string, event: BusMessage): Promise<void> {
    try {
      await this.services.send(subject, event.data, this.timeoutMs);
    } catch (error) {
      if (error instanceof BusNoRespondersError) return;
      throw error;
    }
  }
}
