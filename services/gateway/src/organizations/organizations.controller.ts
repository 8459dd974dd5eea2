import { Body, Controller, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { AddMemberHandler } from './add-member.handler.js';
import { CreateOrganizationHandler } from './create-organization.handler.js';
import { GetPlanHandler } from './get-plan.handler.js';
import { ListOrganizationsHandler } from './list-organizations.handler.js';
import { SetPlanHandler } from './set-plan.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { AddMemberBody, CreateOrganizationBody, SetPlanBody } from './organization-bodies.dto.js';

@Controller('v1/orgs')
@UseGuards(ConsoleAuthGuard)
export class OrganizationsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createOrganization: CreateOrganizationHandler,
    private readonly setPlan: SetPlanHandler,
    private readonly addMember: AddMemberHandler,
    private readonly listOrganizations: ListOrganizationsHandler,
    private readonly getPlan: GetPlanHandler,
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

  @Get()
  organizations(@Req() req: ConsoleRequest) {
    return this.listOrganizations.execute({ userId: req.user.userId });
  }

  @Get(':orgId/plan')
  async readPlan(@Req() req: ConsoleRequest, @Param('orgId') orgId: string) {
    await this.access.requireOrganization(req.user, orgId, 'member');
    return this.getPlan.execute({ orgId });
  }
}
