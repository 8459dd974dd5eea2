import { Body, Controller, Delete, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { RemovePollingTriggerHandler } from './remove-polling-trigger.handler.js';
import { SavePollingTriggerHandler } from './save-polling-trigger.handler.js';
import { GetPollingTriggersHandler } from './get-polling-triggers.handler.js';
import type { ExternalRequest } from '../platform/http-guards/external-api.guard.js';
import { chatbotOnlyForFlows } from '../platform/http-guards/external-route-options.js';
import { ExternalRoute } from '../platform/http-guards/external-route.decorator.js';
import { RegisterPollingBody } from './polling-bodies.dto.js';

/** Polling triggers of a chatbot project's flow (scope flow:trigger; not rate limited). */
@Controller('v1/orgs/:orgId/flows/:projectId/polling')
export class PollingController {
  constructor(
    private readonly saveTrigger: SavePollingTriggerHandler,
    private readonly getTriggers: GetPollingTriggersHandler,
    private readonly removeTrigger: RemovePollingTriggerHandler,
  ) {}

  @Post()
  @HttpCode(201)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  register(@Req() req: ExternalRequest, @Body() body: RegisterPollingBody) {
    return this.saveTrigger.execute(req.caller, body);
  }

  @Get()
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  list(@Req() req: ExternalRequest, @Query('pollKey') pollKey?: string) {
    return this.getTriggers.execute(req.caller, typeof pollKey === 'string' && pollKey !== '' ? pollKey : undefined);
  }

  @Delete()
  @HttpCode(200)
  @ExternalRoute({ scope: 'flow:trigger', projectType: chatbotOnlyForFlows })
  remove(@Req() req: ExternalRequest, @Query('pollKey') pollKey?: string) {
    return this.removeTrigger.execute(req.caller, typeof pollKey === 'string' ? pollKey : undefined);
  }
}
