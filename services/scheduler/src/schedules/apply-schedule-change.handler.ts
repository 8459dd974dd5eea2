import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, decodeEnvelope, GatewayChangeAppliedSchema, SCHEDULER_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import { ScheduleCatalog } from './schedule-catalog.js';

/**
 * Applies a change the gateway hands over before answering it (a publish, a deletion): stored,
 * then acknowledged with the configuration version it carried. The gateway answers the publish
 * only after this, so the schedules are in force from its 200 on (DESIGN section 8).
 */
@Controller()
export class ApplyScheduleChangeHandler {
  constructor(private readonly catalog: ScheduleCatalog) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const configVersion = await this.catalog.apply(decodeEnvelope(data));
    return toBinary(GatewayChangeAppliedSchema, create(GatewayChangeAppliedSchema, { configVersion: BigInt(configVersion) }));
  }
}
