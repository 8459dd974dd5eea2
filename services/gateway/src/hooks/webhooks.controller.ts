import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CreateWebhookHandler } from './create-webhook.handler.js';
import { RevokeWebhookHandler } from './revoke-webhook.handler.js';
import { GatewayConfig } from '../config.js';
import { ListWebhooksHandler } from './list-webhooks.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { CreateWebhookBody } from './webhook-bodies.dto.js';

interface ProjectParams {
  orgId: string;
  projectId: string;
}

/** A project's inbound hooks (DESIGN section 9): edit access to create and revoke, any member lists. */
@Controller('v1/orgs/:orgId/projects/:projectId/webhooks')
@UseGuards(ConsoleAuthGuard)
export class WebhooksController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createHook: CreateWebhookHandler,
    private readonly listHooks: ListWebhooksHandler,
    private readonly revokeHook: RevokeWebhookHandler,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  @Post()
  async create(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: CreateWebhookBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.createHook.execute({ project, name: body.name, secret: body.secret, rateLimitPerMinute: body.rateLimitPerMinute, baseUrl: this.baseUrl(req) });
  }

  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listHooks.execute({ orgId: project.orgId, projectId: project.id, baseUrl: this.baseUrl(req) });
  }

  @Delete(':hookId')
  @HttpCode(204)
  async revoke(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { hookId: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    await this.revokeHook.execute({ project, hookId: params.hookId });
  }

  /** PUBLIC_BASE_URL, else the address this request came to. */
  private baseUrl(req: FastifyRequest): string {
    return this.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.host}`;
  }
}
