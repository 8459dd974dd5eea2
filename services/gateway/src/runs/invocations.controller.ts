import { Body, Controller, Get, HttpCode, Param, Patch, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DecideInvocationApprovalHandler } from '../approvals/index.js';
import { ModifyInvocationHandler } from './modify-invocation.handler.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { GetInvocationHandler } from './get-invocation.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { receivedAtOf } from '../platform/http-pipeline/received-at.js';
import { TokenOrConsoleRoute, type TokenOrConsoleRequest } from '../platform/http-guards/token-or-console.guard.js';
import { ModifyInvocationBody } from './run-bodies.dto.js';

/**
 * Reading and changing runs, for the token that started the run (the scope needed depends on
 * the run's target, so it is checked per run) and for signed-in console members (the run page):
 * any member reads; a change needs edit access (OWNER or EDITOR), else 403 `Unauthorized`.
 * Approve and reject are the console's alone; cancel and reschedule follow the token route's
 * rules and messages for both.
 */
@Controller('v1/orgs/:orgId/external-invocations')
export class InvocationsController {
  constructor(
    private readonly getInvocation: GetInvocationHandler,
    private readonly modifyInvocation: ModifyInvocationHandler,
    private readonly decideApproval: DecideInvocationApprovalHandler,
    private readonly consoleAccess: ConsoleAccess,
  ) {}

  @Get(':invocationId')
  @TokenOrConsoleRoute({})
  async get(@Req() req: TokenOrConsoleRequest, @Param('orgId') orgId: string, @Param('invocationId') invocationId: string) {
    if (req.caller) return this.getInvocation.execute({ caller: req.caller, invocationId });
    await this.consoleAccess.requireOrganization(req.user, orgId, 'member');
    return this.getInvocation.executeForMember({ orgId, invocationId });
  }

  @Patch(':invocationId')
  @HttpCode(200)
  @TokenOrConsoleRoute({})
  async modify(
    @Req() req: TokenOrConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('orgId') orgId: string,
    @Param('invocationId') invocationId: string,
    @Body() body: ModifyInvocationBody,
  ) {
    const receivedAt = receivedAtOf(reply);
    if (req.caller) return this.modifyInvocation.execute({ caller: req.caller, invocationId, body, receivedAt });
    // Checked before the run is looked up: a VIEWER learns nothing about which runs exist.
    await this.consoleAccess.requireOrganization(req.user, orgId, 'edit', API_ERRORS.unauthorized);
    if (body.action === 'approve' || body.action === 'reject') {
      return this.decideApproval.execute({ orgId, invocationId, body: { ...body, action: body.action }, decidedBy: req.user.userId });
    }
    return this.modifyInvocation.executeForMember({ orgId, invocationId, body, receivedAt });
  }
}
