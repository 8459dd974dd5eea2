import { Controller, Get, Headers, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { InvocationAccess } from '../platform/access/invocation-access.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { TokenOrConsoleRoute, type TokenOrConsoleRequest } from '../platform/http-guards/token-or-console.guard.js';
import { answerNothingMore, openEventStream, type EventStreamResponse } from './event-stream-response.js';
import { RunEventsFeed } from './run-events-feed.js';
import { RunHistoryClient, type RecordedRun } from './run-history.client.js';
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
    if (!req.caller) await this.consoleAccess.requireOrganization(req.user, orgId, 'member');
    const lastEventId = lastEventIdOf(lastEventIdHeader);
    if (lastEventId % ID_STRIDE === END_OFFSET) {
      // The same checks and refusals as GET, then nothing follows.
      if (req.caller) await this.access.authorized({ caller: req.caller, invocationId });
      else await this.access.inOrganization(orgId, invocationId);
      return answerNothingMore(reply);
    }

    // Opened once the read has passed the checks; until then the stream writes nothing.
    const opened: { response?: EventStreamResponse } = {};
    let finalInvocation: Record<string, unknown> | null = null;
    const stream = new RunStream(
      {
        write: (text) => opened.response?.write(text),
        close: () => opened.response?.close(),
        eventsAfter: (sequence) => this.history.eventsAfter(orgId, invocationId, sequence),
        invocation: () => (finalInvocation ? Promise.resolve(finalInvocation) : this.history.endedInvocation(orgId, invocationId)),
        onError: (error) => this.logger.warn({ err: error, invocationId }, 'a run stream stopped: its history could not be read'),
      },
      lastEventId,
    );
    // Followed before the history is read: an event committed meanwhile is heard (and waits for the history), not lost.
    const unfollow = this.feed.followRun(invocationId, stream);
    let recorded: RecordedRun;
    try {
      // One read: the run's history, who may read it (the same checks and refusals as GET), and the run itself once ended.
      recorded = await this.history.runAfter(orgId, invocationId, 0);
      if (req.caller) this.access.check(req.caller, recorded);
    } catch (error) {
      stream.stop();
      unfollow();
      throw error;
    }
    finalInvocation = recorded.finalInvocation;
    opened.response = openEventStream(reply, () => {
      stream.stop();
      unfollow();
    });
    // The gateway began stopping during the read: the client reconnects elsewhere with its Last-Event-ID.
    if (stream.ended) opened.response.close();
    else stream.start(recorded.envelopes);
  }
}
