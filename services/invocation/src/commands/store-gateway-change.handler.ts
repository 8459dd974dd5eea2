import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, decodeEnvelope, GatewayChangeAppliedSchema, INVOCATION_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import { GatewayCopies } from '../runs/gateway-copies.repository.js';

/**
 * A change the gateway hands over before answering it: stored in the copies, then
 * acknowledged, so the change is in force here from the moment its client is answered.
 */
@Controller()
export class StoreGatewayChangeHandler {
  constructor(private readonly copies: GatewayCopies) {}

  @MessagePattern(INVOCATION_REQUEST_SUBJECTS.APPLY_GATEWAY_CHANGE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const configVersion = await this.copies.apply(decodeEnvelope(data));
    return toBinary(GatewayChangeAppliedSchema, create(GatewayChangeAppliedSchema, { configVersion: BigInt(configVersion) }));
  }
}
