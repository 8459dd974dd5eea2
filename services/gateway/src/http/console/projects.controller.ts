import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, UseGuards } from '@nestjs/common';
import { CreateApiTokenHandler } from '../../commands/create-api-token.handler.js';
import { CreateProjectHandler } from '../../commands/create-project.handler.js';
import { DeleteProjectHandler } from '../../commands/delete-project.handler.js';
import { PublishDefinitionHandler } from '../../commands/publish-definition.handler.js';
import { RevokeApiTokenHandler } from '../../commands/revoke-api-token.handler.js';
import { SaveDefinitionHandler } from '../../commands/save-definition.handler.js';
import { UpdateApiSettingsHandler } from '../../commands/update-api-settings.handler.js';
import { GetApiSettingsHandler } from '../../queries/get-api-settings.handler.js';
import { ListApiTokensHandler } from '../../queries/list-api-tokens.handler.js';
import { ConsoleAccess } from './console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from './console-auth.guard.js';
import { CreateApiTokenBody, CreateProjectBody, SaveDefinitionBody, UpdateApiSettingsBody } from './console-bodies.dto.js';

/** Projects, their definition, API settings and API tokens, for signed-in console users. */
@Controller('v1/orgs/:orgId/projects')
@UseGuards(ConsoleAuthGuard)
export class ProjectsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createProject: CreateProjectHandler,
    private readonly saveDefinition: SaveDefinitionHandler,
    private readonly publishDefinition: PublishDefinitionHandler,
    private readonly getApiSettings: GetApiSettingsHandler,
    private readonly updateApiSettings: UpdateApiSettingsHandler,
    private readonly createApiToken: CreateApiTokenHandler,
    private readonly listApiTokens: ListApiTokensHandler,
    private readonly revokeApiToken: RevokeApiTokenHandler,
    private readonly deleteProject: DeleteProjectHandler,
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
    return this.publishDefinition.execute({ projectId: project.id });
  }

  @Get(':projectId/api-settings')
  async settings(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.getApiSettings.execute({ projectId: project.id });
  }

  @Patch(':projectId/api-settings')
  async changeSettings(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: UpdateApiSettingsBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.updateApiSettings.execute({ project, changes: body });
  }

  @Post(':projectId/api-tokens')
  async createToken(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: CreateApiTokenBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.createApiToken.execute({ project, userId: req.user.userId, name: body.name, scopes: body.scopes, expiresAt: body.expiresAt });
  }

  @Get(':projectId/api-tokens')
  async tokens(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listApiTokens.execute({ projectId: project.id });
  }

  @Delete(':projectId/api-tokens/:tokenId')
  @HttpCode(204)
  async revokeToken(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { tokenId: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    await this.revokeApiToken.execute({ project, tokenId: params.tokenId });
  }

  @Delete(':projectId')
  @HttpCode(204)
  async delete(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'owner');
    await this.deleteProject.execute({ projectId: project.id });
  }
}

interface ProjectParams {
  orgId: string;
  projectId: string;
}
