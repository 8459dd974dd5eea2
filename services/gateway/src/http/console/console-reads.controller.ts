import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { GetPlanHandler } from '../../queries/get-plan.handler.js';
import { ListOrganizationsHandler } from '../../queries/list-organizations.handler.js';
import { ListProjectsHandler } from '../../queries/list-projects.handler.js';
import { definitionView, projectDetail } from '../../queries/project-views.js';
import { ConsoleAccess } from './console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from './console-auth.guard.js';

/** What the console reads to draw its pages: organizations, plan and usage, projects, definitions. Any member. */
@Controller('v1/orgs')
@UseGuards(ConsoleAuthGuard)
export class ConsoleReadsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly listOrganizations: ListOrganizationsHandler,
    private readonly getPlan: GetPlanHandler,
    private readonly listProjects: ListProjectsHandler,
  ) {}

  @Get()
  organizations(@Req() req: ConsoleRequest) {
    return this.listOrganizations.execute({ userId: req.user.userId });
  }

  @Get(':orgId/plan')
  async plan(@Req() req: ConsoleRequest, @Param('orgId') orgId: string) {
    await this.access.requireOrganization(req.user, orgId, 'member');
    return this.getPlan.execute({ orgId });
  }

  @Get(':orgId/projects')
  async projects(@Req() req: ConsoleRequest, @Param('orgId') orgId: string) {
    await this.access.requireOrganization(req.user, orgId, 'member');
    return this.listProjects.execute({ orgId });
  }

  @Get(':orgId/projects/:projectId')
  async project(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Param('projectId') projectId: string) {
    return projectDetail(await this.access.requireProject(req.user, orgId, projectId, 'member'));
  }

  @Get(':orgId/projects/:projectId/definition')
  async definition(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Param('projectId') projectId: string, @Query('stage') stage: unknown) {
    const project = await this.access.requireProject(req.user, orgId, projectId, 'member');
    return definitionView(project, typeof stage === 'string' ? stage : undefined);
  }
}
