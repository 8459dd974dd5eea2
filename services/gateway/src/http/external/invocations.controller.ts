import { Body, Controller, Get, HttpCode, Param, Patch, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { receivedAtOf } from '../received-at.js';
import { ModifyInvocationHandler } from '../../commands/modify-invocation.handler.js';
import { GetInvocationHandler } from '../../queries/get-invocation.handler.js';
import type { ExternalRequest } from './external-api.guard.js';
import { ModifyInvocationBody } from './external-bodies.dto.js';
import { ExternalRoute } from './external-route.decorator.js';

/** Reading and changing runs. The scope needed depends on the run's target, so it is checked per run. */
@Controller('v1/orgs/:orgId/external-invocations')
export class InvocationsController {
  constructor(
    private readonly getInvocation: GetInvocationHandler,
    private readonly modifyInvocation: ModifyInvocationHandler,
  ) {}

  @Get(':invocationId')
  @ExternalRoute({})
  get(@Req() req: ExternalRequest, @Param('invocationId') invocationId: string) {
    return this.getInvocation.execute({ caller: req.caller, invocationId });
  }

  @Patch(':invocationId')
  @HttpCode(200)
  @ExternalRoute({})
  modify(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('invocationId') invocationId: string,
    @Body() body: ModifyInvocationBody,
  ) {
    return this.modifyInvocation.execute({ caller: req.caller, invocationId, body, receivedAt: receivedAtOf(reply) });
  }
}
