import { Module } from '@nestjs/common';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { CreateInboundHookHandler } from './commands/create-inbound-hook.handler.js';
import { RecordRejectedDeliveryHandler } from './commands/record-rejected-delivery.handler.js';
import { RevokeInboundHookHandler } from './commands/revoke-inbound-hook.handler.js';
import { VerifyDeliveryHandler } from './commands/verify-delivery.handler.js';
import { WebhookConfig } from './config.js';
import { DeliveryPruner } from './deliveries/delivery-pruner.js';
import { ListInboundHooksHandler } from './queries/list-inbound-hooks.handler.js';

/** Inbound hooks: creates, lists and revokes them, verifies their deliveries, reports rejected ones. */
@Module({
  controllers: [CreateInboundHookHandler, ListInboundHooksHandler, RevokeInboundHookHandler, VerifyDeliveryHandler, RecordRejectedDeliveryHandler],
  providers: [
    { provide: WebhookConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(WebhookConfig, env) },
    { provide: SecretBox, inject: [WebhookConfig], useFactory: (config: WebhookConfig) => new SecretBox(config.SECRETS_KEY) },
    DeliveryPruner,
  ],
})
export class WebhookModule {}
