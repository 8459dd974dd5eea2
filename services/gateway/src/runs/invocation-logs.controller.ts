import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { GetInvocationMetricsHandler } from './get-invocation-metrics.handler.js';
import { ListInvocationLogsHandler } from './list-invocation-logs.handler.js';
import { single, type RawQuery } from './run-log-query.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, DashboardOnly, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';

/**
 * The console's logs and invocation health. They share their prefix with the token routes
 * GET/PATCH `external-invocations/:invocationId` (invocations.controller.ts);
 * find-my-way matches the static segments `logs` and `metrics` before the parameter, so these
 * two are never read as an invocation id. Dashboard only: an API token gets 403 `Unauthorized`.
 */
@Controller('v1/orgs/:orgId/external-invocations')
@UseGuards(ConsoleAuthGuard)
export class InvocationLogsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly listLogs: ListInvocationLogsHandler,
    private readonly readMetrics: GetInvocationMetricsHandler,
  ) {}

  @Get('logs')
  @DashboardOnly()
  async logs(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Query() query: RawQuery) {
    return this.listLogs.execute(await this.scope(req, orgId, query), query);
  }

  @Get('metrics')
  @DashboardOnly()
  async metrics(@Req() req: ConsoleRequest, @Param('orgId') orgId: string, @Query() query: RawQuery) {
    return this.readMetrics.execute(await this.scope(req, orgId, query), query);
  }

  /** Any member of the organization; a projectId must name a live project of it (else 404). */
  private async scope(req: ConsoleRequest, orgId: string, query: RawQuery): Promise<{ orgId: string; projectId?: string }> {
    // Membership first: a non-member gets 404 whatever the query holds.
    await this.access.requireOrganization(req.user, orgId, 'member');
    const projectId = single(query, 'projectId');
    if (projectId === undefined) return { orgId };
    const project = await this.access.requireProject(req.user, orgId, projectId, 'member');
    return { orgId, projectId: project.id };
  }
}
