import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { GATEWAY_EVENT_SUBJECTS, type Envelope } from '@runline/contracts';
import { ProjectCopies } from './project-copies.js';

/**
 * Gateway events from JetStream, applied to the project copies; most arrive here a second time
 * (the gateway hands each change over first, UpdateProjectCopyHandler), and the inbox makes
 * that delivery a no-op.
 */
@Controller()
export class ProjectCopiesProjector {
  constructor(private readonly copies: ProjectCopies) {}

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
