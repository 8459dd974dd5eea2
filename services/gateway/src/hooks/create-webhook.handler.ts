import { Injectable } from '@nestjs/common';
import { create, CreateInboundHookReplySchema, CreateInboundHookRequestSchema, fromBinary, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { HookDirectory } from './hook-directory.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { inboundHookView } from './inbound-hook-view.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

export interface CreateWebhookCommand {
  project: Pick<ProjectEntity, 'id' | 'orgId'>;
  name: string;
  secret?: string;
  rateLimitPerMinute?: number;
  /** Where the hook's URL starts (PUBLIC_BASE_URL or the gateway's own address). */
  baseUrl: string;
}

/** Creates an inbound hook in the webhook service; the answer is the only place its secret shows. */
@Injectable()
export class CreateWebhookHandler {
  constructor(
    private readonly services: ServiceClient,
    private readonly hooks: HookDirectory,
  ) {}

  async execute(command: CreateWebhookCommand) {
    const request = create(CreateInboundHookRequestSchema, {
      orgId: command.project.orgId,
      projectId: command.project.id,
      name: command.name,
      secret: command.secret ?? '',
      rateLimitPerMinute: command.rateLimitPerMinute ?? 0,
    });
    const reply = fromBinary(
      CreateInboundHookReplySchema,
      await this.services.request('webhook', WEBHOOK_REQUEST_SUBJECTS.CREATE_INBOUND_HOOK, toBinary(CreateInboundHookRequestSchema, request)),
    );
    if (!reply.hook) throw new Error('the webhook service answered CreateInboundHook without the hook');
    // A "no such hook" remembered for this id (someone guessed it) must not outlive its creation.
    this.hooks.evict(reply.hook.id);
    const { id, name, url, status, rateLimitPerMinute, createdAt } = inboundHookView(reply.hook, command.baseUrl);
    return { id, name, url, secret: reply.secret, status, rateLimitPerMinute, createdAt };
  }
}
