import { Controller, Get, Param, Req } from '@nestjs/common';
import { GetInvocationHandler } from '../../queries/get-invocation.handler.js';
import type { ExternalRequest } from './external-api.guard.js';
import { ExternalRoute } from './external-route.decorator.js';

/** Reading runs. The scope needed depends on the run's target, so it is checked per run. */
@Controller('v1/orgs/:orgId/external-invocations')
export class InvocationsController {
  constructor(private readonly getInvocation: GetInvocationHandler) {}

  @Get(':invocationId')
  @ExternalRoute({})
  get(@Req() req: ExternalRequest, @Param('invocationId') invocationId: string) {
    return this.getInvocation.execute({ caller: req.caller, invocationId });
  }
}
