import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { scopeOfProject } from '../platform/access/project-scope.js';
import { RemovePollingTriggerHandler } from './remove-polling-trigger.handler.js';
import { SavePollingTriggerHandler } from './save-polling-trigger.handler.js';
import { GetPollingTriggersHandler } from './get-polling-triggers.handler.js';
import { RegisterPollingBody } from './polling-bodies.dto.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';

interface ProjectParams {
  orgId: string;
  projectId: string;
}

/**
 * The console's mirror of `/flows/{projectId}/polling`: the same handlers, bodies and answers,
 * for signed-in members (any member lists; edit access registers and deletes), and for
 * automation projects too (their items run the workflow). The project is read for the request,
 * so the versions passed on are current (DESIGN section 8).
 */
@Controller('v1/orgs/:orgId/projects/:projectId/polling-triggers')
@UseGuards(ConsoleAuthGuard)
export class ProjectPollingTriggersController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly saveTrigger: SavePollingTriggerHandler,
    private readonly getTriggers: GetPollingTriggersHandler,
    private readonly removeTrigger: RemovePollingTriggerHandler,
  ) {}

  @Post()
  @HttpCode(201)
  async register(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: RegisterPollingBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.saveTrigger.execute(scopeOfProject(project), body);
  }

  /** All the project's triggers, or (`?pollKey=`) the one with that key, as the token route answers. */
  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Query('pollKey') pollKey?: string) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.getTriggers.execute(scopeOfProject(project), typeof pollKey === 'string' && pollKey !== '' ? pollKey : undefined);
  }

  /** `{data: [trigger]}`, or `{data: []}` for an unknown key: the token route's `?pollKey=` answer. */
  @Get(':pollKey')
  async one(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { pollKey: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.getTriggers.execute(scopeOfProject(project), params.pollKey);
  }

  @Delete(':pollKey')
  @HttpCode(200)
  async remove(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { pollKey: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.removeTrigger.execute(scopeOfProject(project), params.pollKey);
  }
}
