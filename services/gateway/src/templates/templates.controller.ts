import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { CreateTemplateHandler } from './create-template.handler.js';
import { DeleteTemplateHandler } from './delete-template.handler.js';
import { UpdateTemplateHandler } from './update-template.handler.js';
import { GetTemplateHandler } from './get-template.handler.js';
import { ListTemplatesHandler } from './list-templates.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { TemplateBody } from './template-bodies.dto.js';

/** The project's template library: members read it, edit access changes it. */
@Controller('v1/orgs/:orgId/projects/:projectId/templates')
@UseGuards(ConsoleAuthGuard)
export class TemplatesController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly listTemplates: ListTemplatesHandler,
    private readonly getTemplate: GetTemplateHandler,
    private readonly createTemplate: CreateTemplateHandler,
    private readonly updateTemplate: UpdateTemplateHandler,
    private readonly deleteTemplate: DeleteTemplateHandler,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listTemplates.execute({ projectId: project.id });
  }

  @Get(':id')
  async one(@Req() req: ConsoleRequest, @Param() params: TemplateParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.getTemplate.execute({ projectId: project.id, id: params.id });
  }

  @Post()
  async create(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: TemplateBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.createTemplate.execute({ project, name: body.name, endpoint: body.endpoint, body: body.body });
  }

  @Put(':id')
  async replace(@Req() req: ConsoleRequest, @Param() params: TemplateParams, @Body() body: TemplateBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.updateTemplate.execute({ project, id: params.id, name: body.name, endpoint: body.endpoint, body: body.body });
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: ConsoleRequest, @Param() params: TemplateParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    await this.deleteTemplate.execute({ projectId: project.id, id: params.id });
  }
}

interface ProjectParams {
  orgId: string;
  projectId: string;
}

interface TemplateParams extends ProjectParams {
  id: string;
}
