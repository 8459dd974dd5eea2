import { Body, Controller, Delete, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { PollingTriggersHandler } from '../../commands/polling-triggers.handler.js';
import type { ExternalRequest } from './external-api.guard.js';
import { chatbotOnlyForFlows, ExternalRoute } from './external-route.decorator.js';
import { RegisterPollingBody } from './polling-bodies.dto.js';

/** Polling triggers of a chatbot project's flow (scope flow:trigger; not rate limited). */
@Controller('v1/orgs/:orgId/flows/:projectId/polling')
export class PollingController {
  constructor(private readonly triggers: PollingTriggersHandler) {}

  @Post()
  @HttpCode(201)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  register(@Req() req: ExternalRequest, @Body() body: RegisterPollingBody) {
    return this.triggers.register(req.caller, body);
  }

  @Get()
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  list(@Req() req: ExternalRequest, @Query('pollKey') pollKey?: string) {
    return this.triggers.list(req.caller, typeof pollKey === 'string' && pollKey !== '' ? pollKey : undefined);
  }

  @Delete()
  @HttpCode(200)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  remove(@Req() req: ExternalRequest, @Query('pollKey') pollKey?: string) {
    return this.triggers.delete(req.caller, typeof pollKey === 'string' ? pollKey : undefined);
  }
}
