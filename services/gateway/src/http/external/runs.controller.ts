import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  AutomationTriggerBody,
  BotInvokeBody,
  BotMessageBody,
  FlowTriggerBody,
} from './external-bodies.dto.js';
import type { ExternalRequest } from './external-api.guard.js';
import { automationOnly, chatbotOnlyForBots, chatbotOnlyForFlows, ExternalRoute } from './external-route.decorator.js';
import { RunRequests, type RunModeName, type TargetName } from './run-requests.js';

const IDEMPOTENCY_HEADER = 'x-idempotency-key';

/** The bot, flow and automation run endpoints of the spec. */
@Controller('v1/orgs/:orgId')
export class RunsController {
  constructor(private readonly runs: RunRequests) {}

  @Post('bots/:projectId/message')
  @HttpCode(200)
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
    if (mode === 'ASYNC' && target !== 'BOT' && isScheduled(body)) {
      // Scheduled runs arrive with the scheduler (issue 4); running one now would run it at the wrong time.
      void reply.status(501);
      return { error: 'Scheduled runs (runAt, delaySeconds) are not available in this build yet' };
    }
    const answer = await this.runs.start({ caller: req.caller, target, mode, body: body as Record<string, unknown>, idempotencyKey: key });
    void reply.status(answer.status);
    return answer.body;
  }
}

function isScheduled(body: object): boolean {
  const fields = body as { runAt?: unknown; delaySeconds?: unknown };
  return fields.runAt !== undefined || fields.delaySeconds !== undefined;
}
