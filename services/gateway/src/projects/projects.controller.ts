import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { CreateProjectHandler } from './create-project.handler.js';
import { DefinitionHistoryHandler } from './definition-history.handler.js';
import { DeleteProjectHandler } from './delete-project.handler.js';
import { ListProjectsHandler } from './list-projects.handler.js';
import { definitionView, projectDetail } from './project-views.js';
import { PublishDefinitionHandler } from './publish-definition.handler.js';
import { SaveDefinitionHandler } from './save-definition.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { CreateProjectBody, SaveDefinitionBody } from './project-bodies.dto.js';

/** Projects and their definition, for signed-in console users (API settings and tokens: settings/, tokens/). */
@Controller('v1/orgs/:orgId/projects')
@UseGuards(ConsoleAuthGuard)
export class ProjectsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createProject: CreateProjectHandler,
    private readonly saveDefinition: SaveDefinitionHandler,
    private readonly publishDefinition: PublishDefinitionHandler,
    private readonly deleteProject: DeleteProjectHandler,
    private readonly listProjects: ListProjectsHandler,
    private readonly definitionHistory: DefinitionHistoryHandler,
  ) {}

  @Post()
  async create(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Body() body: CreateProjectBody) {
    await this.access.requireOrganization(req.user, orgId, 'edit');
    return this.createProject.execute({ orgId, name: body.name, type: body.type });
  }

  @Put(':projectId/definition')
  @HttpCode(200)
  async definition(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: SaveDefinitionBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.saveDefinition.execute({ project, definition: body.definition });
  }

  @Post(':projectId/publish')
  @HttpCode(200)
  async publish(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.publishDefinition.execute({ projectId: project.id, publishedBy: req.user.userId });
  }

  @Delete(':projectId')
  @HttpCode(204)
  async delete(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'owner');
    await this.deleteProject.execute({ projectId: project.id });
  }

  @Get()
  async projects(@Req() req: ConsoleRequest, @Param('orgId') orgId: string) {
    await this.access.requireOrganization(req.user, orgId, 'member');
    return this.listProjects.execute({ orgId });
  }

  @Get(':projectId')
  async project(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Param('projectId') projectId: string) {
    return projectDetail(await this.access.requireProject(req.user, orgId, projectId, 'member'));
  }

  @Get(':projectId/definition')
  async readDefinition(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Param('projectId') projectId: string, @Query('stage') stage: unknown) {
    const project = await this.access.requireProject(req.user, orgId, projectId, 'member');
    return definitionView(project, typeof stage === 'string' ? stage : undefined);
  }

  @Get(':projectId/definition/versions')
  async definitionVersions(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.definitionHistory.history(project);
  }

  @Get(':projectId/definition/versions/:version')
  async definitionVersion(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { version: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.definitionHistory.version(project, params.version);
  }

  @Get(':projectId/definition/schema')
  async definitionSchema(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.definitionHistory.schema(project);
  }
}

interface ProjectParams {
  orgId: string;
  projectId: string;
}
