import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { GATEWAY_EVENT_SUBJECTS, type Envelope } from '@runline/contracts';
import { GatewayCopies } from '../runs/gateway-copies.repository.js';

/**
 * Gateway events from JetStream, applied to the invocation service's copies. Most arrive a
 * second time here: the gateway hands each change over directly before answering it
 * (StoreGatewayChangeHandler), and the inbox makes this delivery a no-op then.
 */
@Controller()
export class GatewayCopiesProjector {
  constructor(private readonly copies: GatewayCopies) {}

  @EventPattern(GATEWAY_EVENT_SUBJECTS.ORGANIZATION_CREATED)
  async organizationCreated(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.ORGANIZATION_PLAN_CHANGED)
  async organizationPlanChanged(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.PROJECT_CREATED)
  async projectCreated(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED)
  async projectApiSettingsChanged(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.DEFINITION_PUBLISHED)
  async definitionPublished(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED)
  async apiTokenRevoked(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.INBOUND_HOOK_REVOKED)
  async inboundHookRevoked(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }

  @EventPattern(GATEWAY_EVENT_SUBJECTS.PROJECT_DELETED)
  async projectDeleted(@Payload() envelope: Envelope): Promise<void> {
    await this.copies.apply(envelope);
  }
}
