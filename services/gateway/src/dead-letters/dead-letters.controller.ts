import { Controller, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { ReplayDeadLetterEventHandler } from './replay-dead-letter-event.handler.js';
import { ListDeadLetterEventsHandler, type DeadLetterListQuery } from './list-dead-letter-events.handler.js';
import type { ExternalRequest } from '../platform/http-guards/external-api.guard.js';
import { automationOnly, chatbotOnlyForFlows } from '../platform/http-guards/external-route-options.js';
import { ExternalRoute } from '../platform/http-guards/external-route.decorator.js';

/**
 * Dead letters: the spec's routes under /flows (scope flow:trigger), and our extension under
 * /automations (scope automation:trigger) with the same semantics, because an automation
 * project cannot hold a flow:trigger token. Not rate limited.
 */
@Controller('v1/orgs/:orgId')
export class DeadLettersController {
  constructor(
    private readonly listEvents: ListDeadLetterEventsHandler,
    private readonly replayEvent: ReplayDeadLetterEventHandler,
  ) {}

  @Get('flows/:projectId/dead-letters')
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  listFlow(@Req() req: ExternalRequest, @Query() query: DeadLetterListQuery) {
    return this.listEvents.execute(req.caller, query);
  }

  @Post('flows/:projectId/dead-letters')
  @HttpCode(200)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  replayFlow(@Req() req: ExternalRequest, @Query('id') id?: string) {
    return this.replayEvent.execute(req.caller, id);
  }

  @Get('automations/:projectId/dead-letters')
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  listAutomation(@Req() req: ExternalRequest, @Query() query: DeadLetterListQuery) {
    return this.listEvents.execute(req.caller, query);
  }

  @Post('automations/:projectId/dead-letters')
  @HttpCode(200)
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  replayAutomation(@Req() req: ExternalRequest, @Query('id') id?: string) {
    return this.replayEvent.execute(req.caller, id);
  }
}
