import { Controller, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { DeadLettersHandler, type DeadLetterListQuery } from '../../commands/dead-letters.handler.js';
import type { ExternalRequest } from './external-api.guard.js';
import { automationOnly, chatbotOnlyForFlows, ExternalRoute } from './external-route.decorator.js';

/**
 * Dead letters: the spec's routes under /flows (scope flow:trigger), and our extension under
 * /automations (scope automation:trigger) with the same semantics, because an automation
 * project cannot hold a flow:trigger token. Not rate limited.
 */
@Controller('v1/orgs/:orgId')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLettersHandler) {}

  @Get('flows/:projectId/dead-letters')
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  listFlow(@Req() req: ExternalRequest, @Query() query: DeadLetterListQuery) {
    return this.deadLetters.list(req.caller, query);
  }

  @Post('flows/:projectId/dead-letters')
  @HttpCode(200)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  replayFlow(@Req() req: ExternalRequest, @Query('id') id?: string) {
    return this.deadLetters.replay(req.caller, id);
  }

  @Get('automations/:projectId/dead-letters')
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  listAutomation(@Req() req: ExternalRequest, @Query() query: DeadLetterListQuery) {
    return this.deadLetters.list(req.caller, query);
  }

  @Post('automations/:projectId/dead-letters')
  @HttpCode(200)
  @ExternalRoute({ scope: 'automation:trigger', projectType: automationOnly })
  replayAutomation(@Req() req: ExternalRequest, @Query('id') id?: string) {
    return this.deadLetters.replay(req.caller, id);
  }
}
