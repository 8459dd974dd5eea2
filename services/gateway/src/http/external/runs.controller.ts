import { Body, Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
import {
  AutomationTriggerBody,
  BotInvokeBody,
  BotMessageBody,
  FlowTriggerBody,
} from './external-bodies.dto.js';
import type { ExternalRequest } from './external-api.guard.js';
import { automationOnly, chatbotOnlyForBots, chatbotOnlyForFlows, ExternalRoute } from './external-route.decorator.js';
import { RunRequests, type RunMode, type RunTarget } from './run-requests.js';

const IDEMPOTENCY_HEADER = 'x-idempotency-key';

/** The bot, flow and automation run endpoints of the spec. */
@Controller('v1/orgs/:orgId')
export class RunsController {
  constructor(private readonly runs: RunRequests) {}

  @Post('bots/:projectId/message')
  @HttpCode(200)
  @ExternalRoute({ scope: 'bot:invoke', projectType: chatbotOnlyForBots })
  botMessage(@Req() req: ExternalRequest, @Body() body: BotMessageBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'BOT', 'SYNC', body, key);
  }

  @Post('bots/:projectId/invoke')
  @HttpCode(202)
  @ExternalRoute({ scope: 'bot:invoke', projectType: chatbotOnlyForBots })
  botInvoke(@Req() req: ExternalRequest, @Body() body: BotInvokeBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'BOT', 'ASYNC', body, key);
  }

  @Post('flows/:projectId/trigger')
  @HttpCode(200)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  flowTrigger(@Req() req: ExternalRequest, @Body() body: FlowTriggerBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'FLOW', 'SYNC', body, key);
  }

  @Post('flows/:projectId/trigger-async')
  @HttpCode(202)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  flowTriggerAsync(@Req() req: ExternalRequest, @Body() body: FlowTriggerBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'FLOW', 'ASYNC', body, key);
  }

  @Post('automations/:projectId/trigger')
  @HttpCode(200)
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  automationTrigger(@Req() req: ExternalRequest, @Body() body: AutomationTriggerBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'AUTOMATION', 'SYNC', body, key);
  }

  @Post('automations/:projectId/trigger-async')
  @HttpCode(202)
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  automationTriggerAsync(@Req() req: ExternalRequest, @Body() body: AutomationTriggerBody, @Headers(IDEMPOTENCY_HEADER) key?: string) {
    return this.start(req, 'AUTOMATION', 'ASYNC', body, key);
  }

  private start(req: ExternalRequest, target: RunTarget, mode: RunMode, body: object, key?: string) {
    return this.runs.start({ caller: req.caller, target, mode, body: body as Record<string, unknown>, idempotencyKey: key });
  }
}
