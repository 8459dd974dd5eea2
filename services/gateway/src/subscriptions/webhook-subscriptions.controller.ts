import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CreateWebhookSubscriptionHandler } from './create-webhook-subscription.handler.js';
import { RetryWebhookSubscriptionHandler } from './retry-webhook-subscription.handler.js';
import { RevokeWebhookSubscriptionHandler } from './revoke-webhook-subscription.handler.js';
import { GatewayConfig } from '../config.js';
import { ListWebhookSubscriptionsHandler } from './list-webhook-subscriptions.handler.js';
import { ConsoleAccess } from '../platform/http-guards/console-access.js';
import { ConsoleAuthGuard, type ConsoleRequest } from '../platform/http-guards/console-auth.guard.js';
import { CreateWebhookSubscriptionBody, eventNamesOf } from './webhook-subscription-bodies.dto.js';

interface ProjectParams {
  orgId: string;
  projectId: string;
}

/**
 * A project's managed webhook subscriptions (DESIGN section 9): edit access to create, retry
 * and revoke, any member lists. The endpoint a provider delivers to is `/v1/hooks/{id}` under
 * PUBLIC_BASE_URL (else this gateway's own address), like an inbound hook's.
 */
@Controller('v1/orgs/:orgId/projects/:projectId/webhook-subscriptions')
@UseGuards(ConsoleAuthGuard)
export class WebhookSubscriptionsController {
  constructor(
    private readonly access: ConsoleAccess,
    private readonly createSubscription: CreateWebhookSubscriptionHandler,
    private readonly listSubscriptions: ListWebhookSubscriptionsHandler,
    private readonly retrySubscription: RetryWebhookSubscriptionHandler,
    private readonly revokeSubscription: RevokeWebhookSubscriptionHandler,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  @Post()
  async create(@Req() req: ConsoleRequest, @Param() params: ProjectParams, @Body() body: CreateWebhookSubscriptionBody) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.createSubscription.execute({
      project,
      provider: body.provider,
      events: eventNamesOf(body.events),
      credentials: body.credentials,
      baseUrl: this.baseUrl(req),
    });
  }

  @Get()
  async list(@Req() req: ConsoleRequest, @Param() params: ProjectParams) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'member');
    return this.listSubscriptions.execute({ orgId: project.orgId, projectId: project.id });
  }

  @Post(':subscriptionId/retry')
  @HttpCode(200)
  async retry(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { subscriptionId: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    return this.retrySubscription.execute({ project, subscriptionId: params.subscriptionId });
  }

  @Delete(':subscriptionId')
  @HttpCode(204)
  async revoke(@Req() req: ConsoleRequest, @Param() params: ProjectParams & { subscriptionId: string }) {
    const project = await this.access.requireProject(req.user, params.orgId, params.projectId, 'edit');
    await this.revokeSubscription.execute({ project, subscriptionId: params.subscriptionId });
  }

  /** PUBLIC_BASE_URL, else the address this request came to. */
  private baseUrl(req: FastifyRequest): string {
    return this.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.host}`;
  }
}
