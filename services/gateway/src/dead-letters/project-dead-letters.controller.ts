import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { scopeOfProject } from '../platform/access/project-scope.js';
import { BulkReplayDeadLetterEventsHandler } from './bulk-replay-dead-letter-events.handler.js';
import { ReplayDeadLetterEventHandler } from './replay-dead-letter-event.handler.js';
import { ListDeadLetterEventsHandler, type DeadLetterListQuery } from './list-dead-letter-events.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';

interface ProjectParams {
  orgId: string;
  projectId: string;
}

/**
 * The console's mirror of `/flows/{projectId}/dead-letters` (and `/automations/…`): the same
 * handlers, query and answers, for signed-in members of either project type (any member lists;
 * edit access replays), plus the bulk replay. A replay passes on the published and
 * configuration versions of the project as read for this request (DESIGN section 8).
 */
@Controller('v1/orgs/:orgId/projects/:projectId/dead-letters')
@UseGuards(ConsoleAuthGuard)
export class ProjectDeadLettersController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly listEvents: ListDeadLetterEventsHandler,
    private readonly replayEvent: ReplayDeadLetterEventHandler,
    private readonly bulkReplay: BulkReplayDeadLetterEventsHandler,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Query() query: DeadLetterListQuery) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listEvents.execute(scopeOfProject(project), query);
  }

  /** `{filter: {source?, targetType?, from?, to?}, dryRun?}`; validated by the handler. */
  @Post('replay')
  @HttpCode(200)
  async replayMatching(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: unknown) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.bulkReplay.execute(scopeOfProject(project), body);
  }

  @Post(':id/replay')
  @HttpCode(200)
  async replay(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { id: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.replayEvent.execute(scopeOfProject(project), params.id);
  }
}
