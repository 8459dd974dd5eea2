import { Body, Controller, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { AddMemberHandler } from '../../commands/add-member.handler.js';
import { CreateOrganizationHandler } from '../../commands/create-organization.handler.js';
import { SetPlanHandler } from '../../commands/set-plan.handler.js';
import { ConsoleAccess } from './console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from './console-auth.guard.js';
import { AddMemberBody, CreateOrganizationBody, SetPlanBody } from './console-bodies.dto.js';

@Controller('v1/orgs')
@UseGuards(ConsoleAuthGuard)
export class OrganizationsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createOrganization: CreateOrganizationHandler,
    private readonly setPlan: SetPlanHandler,
    private readonly addMember: AddMemberHandler,
  ) {}

  @Post()
  create(@Req() req: ConsoleRequest, @Body() body: CreateOrganizationBody) {
    return this.createOrganization.execute({ userId: req.user.userId, name: body.name });
  }

  @Put(':orgId/plan')
  @HttpCode(200)
  async plan(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Body() body: SetPlanBody) {
    await this.access.requirePlatformAdmin(req.user, orgId);
    const { monthlyQuota, rateLimitPerMinute, rateLimitWindowMs, renewalDay } = body;
    return this.setPlan.execute({ orgId, plan: { monthlyQuota, rateLimitPerMinute, rateLimitWindowMs, renewalDay } });
  }

  @Post(':orgId/members')
  async member(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Body() body: AddMemberBody) {
    await this.access.requireOrganization(req.user, orgId, 'owner');
    return this.addMember.execute({ orgId, userId: body.userId, role: body.role });
  }
}
