import { Controller, Get, Headers, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { InvocationAccess } from '../platform/access/invocation-access.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { TokenOrConsoleRoute, type TokenOrConsoleRequest } from '../platform/http-guards/token-or-console.guard.js';
import { answerNothingMore, openEventStream } from './event-stream-response.js';
import { RunEventsFeed } from './run-events-feed.js';
import { RunHistoryClient } from './run-history.client.js';
import { END_OFFSET, ID_STRIDE, lastEventIdOf } from './run-stream-events.js';
import { RunStream } from './run-stream.js';

/**
 * GET /v1/orgs/{orgId}/external-invocations/{id}/events: one run as it happens (DESIGN section
 * 14), for whoever may GET it (the token that started it, with the target's scope; a member of
 * the organization with a console JWT), with the same refusals.
 */
@Controller('v1/orgs/:orgId/external-invocations')
export class RunStreamsController {
  constructor(
    private readonly access: InvocationAccess,
    private readonly consoleAccess: ConsoleAccess,
    private readonly feed: RunEventsFeed,
    private readonly history: RunHistoryClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get(':invocationId/events')
  @TokenOrConsoleRoute({})
  async follow(
    @Req() req: TokenOrConsoleRequest,
    @Res() reply: FastifyReply,
    @Param('orgId') pathOrgId: string,
    @Param('invocationId') invocationId: string,
    @Headers('last-event-id') lastEventIdHeader?: string,
  ): Promise<void> {
    // A token's organization is the one it belongs to, as for GET.
    const orgId = req.caller ? req.caller.orgId : pathOrgId;
    // The same checks and refusals as GET, before anything is streamed.
    if (req.caller) {
      await this.access.authorized({ caller: req.caller, invocationId });
    } else {
      await this.consoleAccess.requireOrganization(req.user, orgId, 'member');
      await this.access.inOrganization(orgId, invocationId);
    }
    const lastEventId = lastEventIdOf(lastEventIdHeader);
    if (lastEventId % ID_STRIDE === END_OFFSET) return answerNothingMore(reply);

    let unfollow = () => {};
    const response = openEventStream(reply, () => {
      stream.stop();
      unfollow();
    });
    const stream = new RunStream(
      {
        write: (text) => response.write(text),
        close: () => response.close(),
        eventsAfter: (sequence) => this.history.eventsAfter(orgId, invocationId, sequence),
        invocation: () => this.history.invocation(orgId, invocationId),
        onError: (error) => this.logger.warn({ err: error, invocationId }, 'a run stream stopped: its history could not be read'),
      },
      lastEventId,
    );
    // Followed before the history is read: an event committed meanwhile is heard, not lost.
    unfollow = this.feed.followRun(invocationId, stream);
    stream.start();
  }
}
