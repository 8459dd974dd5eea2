import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { StartRunHandler, type RunModeName, type StartRunResult, type TargetName } from './start-run.handler.js';
import { refusalAnswer } from '../platform/http-pipeline/api-exception.filter.js';
import { receivedAtOf } from '../platform/http-pipeline/received-at.js';
import type { ExternalRequest } from '../platform/http-guards/external-api.guard.js';
import { AutomationTriggerBody, BotInvokeBody, BotMessageBody, FlowTriggerBody } from './run-bodies.dto.js';
import { automationOnly, chatbotOnlyForBots, chatbotOnlyForFlows } from '../platform/http-guards/external-route-options.js';
import { ExternalRoute } from '../platform/http-guards/external-route.decorator.js';
import { RateLimited } from '../platform/http-guards/rate-limited.decorator.js';
import { RunEndWaiter, waitPreferenceOf } from '../run-streams/index.js';
import { endedInlineRun, endedRunAnswer } from './ended-run-answer.js';

const IDEMPOTENCY_HEADER = 'x-idempotency-key';
/** `Prefer: wait=N` on the async endpoints (DESIGN section 14, RFC 7240). */
const PREFER_HEADER = 'prefer';

/** The status of each outcome of a run request; a refusal's comes from its kind. */
const STATUS_OF_OUTCOME = { finished: 200, accepted: 202, failed: 500 } as const;

/** Where a run request's answer goes: the reply, or anything that takes a status and headers the same way. */
export type AnswerSink = Pick<FastifyReply, 'status' | 'headers'>;

/**
 * Answers a run request: sets the status (and, for a used-up quota, the X-Quota headers) on the
 * reply and returns the JSON body. Writes straight to the reply: a run request is on the hot
 * path, and its answer needs no object of its own.
 */
export function answerRun(reply: AnswerSink, result: StartRunResult): Record<string, unknown> {
  if (result.outcome !== 'refused') {
    void reply.status(STATUS_OF_OUTCOME[result.outcome]);
    return result.run;
  }
  const answer = refusalAnswer(result.refusal);
  if (answer.headers) void reply.headers(answer.headers);
  void reply.status(answer.status);
  return answer.body;
}

/** The bot, flow and automation run endpoints of the spec; each is rate limited on its own counter. */
@Controller('v1/orgs/:orgId')
export class RunsController {
  constructor(
    private readonly startRun: StartRunHandler,
    private readonly endWaiter: RunEndWaiter,
  ) {}

  @Post('bots/:projectId/message')
  @HttpCode(200)
  @RateLimited('bots/message')
  @ExternalRoute({ scope: 'bot:invoke', projectType: chatbotOnlyForBots })
  botMessage(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: BotMessageBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
  ) {
    return this.start(req, reply, 'BOT', 'SYNC', body, key);
  }

  @Post('bots/:projectId/invoke')
  @HttpCode(202)
  @RateLimited('bots/invoke')
  @ExternalRoute({ scope: 'bot:invoke', projectType: chatbotOnlyForBots })
  botInvoke(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: BotInvokeBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
    @Headers(PREFER_HEADER) prefer?: string,
  ) {
    return this.start(req, reply, 'BOT', 'ASYNC', body, key, prefer);
  }

  @Post('flows/:projectId/trigger')
  @HttpCode(200)
  @RateLimited('flows/trigger')
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  flowTrigger(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: FlowTriggerBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
  ) {
    return this.start(req, reply, 'FLOW', 'SYNC', body, key);
  }

  @Post('flows/:projectId/trigger-async')
  @HttpCode(202)
  @RateLimited('flows/trigger-async')
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  flowTriggerAsync(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: FlowTriggerBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
    @Headers(PREFER_HEADER) prefer?: string,
  ) {
    return this.start(req, reply, 'FLOW', 'ASYNC', body, key, prefer);
  }

  @Post('automations/:projectId/trigger')
  @HttpCode(200)
  @RateLimited('automations/trigger')
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  automationTrigger(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: AutomationTriggerBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
  ) {
    return this.start(req, reply, 'AUTOMATION', 'SYNC', body, key);
  }

  @Post('automations/:projectId/trigger-async')
  @HttpCode(202)
  @RateLimited('automations/trigger-async')
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  automationTriggerAsync(
    @Req() req: ExternalRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: AutomationTriggerBody,
    @Headers(IDEMPOTENCY_HEADER) key?: string,
    @Headers(PREFER_HEADER) prefer?: string,
  ) {
    return this.start(req, reply, 'AUTOMATION', 'ASYNC', body, key, prefer);
  }

  private async start(req: ExternalRequest, reply: FastifyReply, target: TargetName, mode: RunModeName, body: object, key?: string, prefer?: string) {
    const result = await this.startRun.execute({
      caller: req.caller,
      target,
      mode,
      body: body as Record<string, unknown>,
      idempotencyKey: key,
      receivedAt: receivedAtOf(reply),
    });
    const waitSeconds = waitPreferenceOf(prefer);
    // A scheduled run starts later: a wait for it would only hold the connection (DESIGN section 14).
    if (waitSeconds !== null && result.outcome === 'accepted' && result.run.status !== 'SCHEDULED') {
      const invocationId = result.run.invocationId as string;
      // A run executed inline has ended by the reply, which says how: no read, no wait.
      const ended = result.ended ? endedInlineRun(invocationId, result.ended) : await this.endWaiter.endedWithin(req.caller.orgId, invocationId, waitSeconds * 1000);
      if (ended) {
        void reply.header('preference-applied', `wait=${waitSeconds}`);
        void reply.status(200);
        return endedRunAnswer(ended, result.run);
      }
    }
    return answerRun(reply, result);
  }
}
