import { Body, Controller, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { scopeOfProject } from '../platform/access/project-scope.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { BackfillScheduleHandler } from './backfill-schedule.handler.js';
import { ChangeScheduleHandler } from './change-schedule.handler.js';
import { GetSchedulesHandler } from './get-schedules.handler.js';
import { TriggerScheduleHandler } from './trigger-schedule.handler.js';

interface ScheduleParams {
  orgId: string;
  projectId: string;
  /** The schedule's id in the definition (`workflow.schedules[].id`), not a UUID. */
  id: string;
}

/**
 * The Schedule triggers of the project's published automation (DESIGN section 12), kept by the
 * scheduler service: any member lists them; edit access pauses, resumes, runs one now and
 * backfills. The project is read for the request, so the configuration version passed on is
 * current (DESIGN section 8).
 */
@Controller('v1/orgs/:orgId/projects/:projectId/schedules')
@UseGuards(ConsoleAuthGuard)
export class SchedulesController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly getSchedules: GetSchedulesHandler,
    private readonly changeSchedule: ChangeScheduleHandler,
    private readonly triggerSchedule: TriggerScheduleHandler,
    private readonly backfillSchedule: BackfillScheduleHandler,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: Omit<ScheduleParams, 'id'>) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.getSchedules.execute(scopeOfProject(project));
  }

  @Post(':id/pause')
  @HttpCode(200)
  async pause(@Req() req: ConsoleRequest, @Param() params: ScheduleParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.changeSchedule.execute(scopeOfProject(project), params.id, 'pause');
  }

  @Post(':id/resume')
  @HttpCode(200)
  async resume(@Req() req: ConsoleRequest, @Param() params: ScheduleParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.changeSchedule.execute(scopeOfProject(project), params.id, 'resume');
  }

  @Post(':id/trigger')
  @HttpCode(202)
  async trigger(@Req() req: ConsoleRequest, @Param() params: ScheduleParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.triggerSchedule.execute(scopeOfProject(project), params.id);
  }

  /** `{from, to}`; validated by the handler. */
  @Post(':id/backfill')
  @HttpCode(202)
  async backfill(@Req() req: ConsoleRequest, @Param() params: ScheduleParams, @Body() body: unknown) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.backfillSchedule.execute(scopeOfProject(project), params.id, body);
  }
}
