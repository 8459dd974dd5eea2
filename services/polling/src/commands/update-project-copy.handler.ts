import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, decodeEnvelope, GatewayChangeAppliedSchema, POLLING_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import { ProjectCopies } from '../events/project-copies.js';

/**
 * Updates the project copy from a change the gateway hands over before answering it: stored,
 * then acknowledged with the configuration version it carried.
 */
@Controller()
export class UpdateProjectCopyHandler {
  constructor(private readonly copies: ProjectCopies) {}

  @MessagePattern(POLLING_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const configVersion = await this.copies.apply(decodeEnvelope(data));
    return toBinary(GatewayChangeAppliedSchema, create(GatewayChangeAppliedSchema, { configVersion: BigInt(configVersion) }));
  }
}
