import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  INVOCATION_QUERY_SUBJECTS,
  isUuid,
  toBinary,
} from '@runline/contracts';
import { findRunView } from './run-views.repository.js';

/**
 * Answers the gateway's GET /external-invocations/{id}. Scoped to the caller's organization:
 * another organization's run is "not found", never "forbidden".
 */
@Controller()
export class ReadRunViewHandler {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(GetInvocationRequestSchema, data);
    const view = isUuid(request.invocationId)
      ? await findRunView(this.dataSource, request.invocationId, request.orgId)
      : null;
    const reply = view
      ? create(GetInvocationReplySchema, {
          found: true,
          invocationJson: JSON.stringify(view.document),
          startedByTokenId: view.startedByTokenId ?? '',
          targetType: view.targetType,
        })
      : create(GetInvocationReplySchema, { found: false });
    return toBinary(GetInvocationReplySchema, reply);
  }
}
