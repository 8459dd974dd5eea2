import { Controller, Get, Inject, Param, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Envelope } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, DashboardOnly, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { openEventStream } from './event-stream-response.js';
import { RunEventsFeed } from './run-events-feed.js';
import { RunLogRowsClient } from './run-log-rows.client.js';
import { PING, serverSentEvent } from './run-stream-events.js';

/**
 * GET /v1/orgs/{orgId}/projects/{projectId}/runs/events (DESIGN section 14): the console's logs
 * and run pages follow the project's runs here instead of polling. Each change of a run (an
 * invocation event of the project, from any invocation replica) sends `event: run` with the
 * run's logs row as it is after the change. Not resumable: a client that reconnects reads the
 * logs page again, then follows. Any member of the organization (console JWT).
 */
@Controller('v1/orgs/:orgId/projects/:projectId/runs')
@UseGuards(ConsoleAuthGuard)
export class ProjectRunsStreamController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly feed: RunEventsFeed,
    private readonly rows: RunLogRowsClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('events')
  @DashboardOnly()
  async follow(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('orgId') orgId: string, @Param('projectId') projectId: string): Promise<void> {
    const project = await this.access.requireProject(req.user, orgId, projectId, 'member');
    let queue: Promise<void> = Promise.resolve();
    let gone = false;
    let unfollow = () => {};
    const response = openEventStream(reply, () => {
      gone = true;
      unfollow();
    });
    unfollow = this.feed.followProject(project.id, {
      onEvent: (envelope: Envelope) => {
        // In order of arrival, one row read at a time per stream: a row never overtakes a newer one.
        queue = queue.then(async () => {
          if (gone) return;
          try {
            const row = await this.rows.rowOf(orgId, project.id, envelope.invocationId);
            if (row && !gone) response.write(serverSentEvent(null, 'run', row));
          } catch (error) {
            this.logger.warn({ err: error, invocationId: envelope.invocationId }, 'a project stream could not read a run; it closes so the client reads the logs again');
            response.close();
          }
        });
      },
      onPing: () => response.write(PING),
      onShutdown: () => response.close(),
    });
    // Opened at once: the client knows it follows before the first change.
    response.write(PING);
  }
}
