import { Body, Controller, Get, Param, Patch, Req, UseGuards } from '@nestjs/common';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { UpdateApiSettingsBody } from './api-settings-bodies.dto.js';
import { GetApiSettingsHandler } from './get-api-settings.handler.js';
import { UpdateApiSettingsHandler } from './update-api-settings.handler.js';

/** A project's API settings, for signed-in console users. */
@Controller('v1/orgs/:orgId/projects')
@UseGuards(ConsoleAuthGuard)
export class ApiSettingsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly getApiSettings: GetApiSettingsHandler,
    private readonly updateApiSettings: UpdateApiSettingsHandler,
  ) {}

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
}

interface ProjectParams {
  orgId: string;
  projectId: string;
}
