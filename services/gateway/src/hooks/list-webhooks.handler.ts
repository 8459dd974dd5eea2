import { Injectable } from '@nestjs/common';
import { create, fromBinary, ListInboundHooksReplySchema, ListInboundHooksRequestSchema, toBinary, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { inboundHookView } from './inbound-hook-view.js';

/** The project's inbound hooks, newest first, revoked ones included, without secrets. */
@Injectable()
export class ListWebhooksHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(query: { orgId: string; projectId: string; baseUrl: string }) {
    const request = create(ListInboundHooksRequestSchema, { orgId: query.orgId, projectId: query.projectId });
    const reply = fromBinary(
      ListInboundHooksReplySchema,
      await this.services.request('webhook', WEBHOOK_QUERY_SUBJECTS.LIST_INBOUND_HOOKS, toBinary(ListInboundHooksRequestSchema, request)),
    );
    return { data: reply.hooks.map((hook) => inboundHookView(hook, query.baseUrl)) };
  }
}
