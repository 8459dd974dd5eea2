import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { receivedAtOf } from '../received-at.js';
import {
  AutomationTriggerBody,
  BotInvokeBody,
  BotMessageBody,
  FlowTriggerBody,
} from './external-bodies.dto.js';
import type { ExternalRequest } from './external-api.guard.js';
import { automationOnly, chatbotOnlyForBots, chatbotOnlyForFlows, ExternalRoute } from './external-route.decorator.js';
import { RateLimited } from './rate-limits/rate-limited.decorator.js';
import { RunRequests, type RunModeName, type TargetName } from './run-requests.js';
import { schedulingFieldsOf } from './scheduling-fields.js';

const IDEMPOTENCY_HEADER = 'x-idempotency-key';

/** The bot, flow and automation run endpoints of the spec; each is rate limited on its own counter. */
@Controller('v1/orgs/:orgId')
export class RunsController {
  constructor(private readonly runs: RunRequests) {}

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
  ) {
    return this.start(req, reply, 'BOT', 'ASYNC', body, key);
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
  ) {
    return this.start(req, reply, 'FLOW', 'ASYNC', body, key);
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
  ) {
    return this.start(req, reply, 'AUTOMATION', 'ASYNC', body, key);
  }

  private async start(req: ExternalRequest, reply: FastifyReply, target: TargetName, mode: RunModeName, body: object, key?: string) {
    const fields = body as Record<string, unknown>;
    const receivedAt = receivedAtOf(reply);
    let runAt: Date | undefined;
    // Only the async trigger endpoints schedule; the sync ones and bots/invoke ignore both fields.
    if (mode === 'ASYNC' && target !== 'BOT') {
      const scheduling = schedulingFieldsOf(fields, receivedAt);
      if (scheduling && 'error' in scheduling) {
        void reply.status(400);
        return { error: scheduling.error };
      }
      // A dry run validates and records nothing, so it carries no start time.
      if (scheduling && fields.dryRun !== true) runAt = scheduling.runAt;
    }
    const answer = await this.runs.start({ caller: req.caller, target, mode, body: fields, idempotencyKey: key, receivedAt, runAt });
    if (answer.headers) void reply.headers(answer.headers);
    void reply.status(answer.status);
    return answer.body;
  }
}
