import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { CreateInboundHookHandler } from './commands/create-inbound-hook.handler.js';
import { CreateSubscriptionHandler } from './commands/create-subscription.handler.js';
import { RecordRejectedDeliveryHandler } from './commands/record-rejected-delivery.handler.js';
import { RetrySubscriptionHandler } from './commands/retry-subscription.handler.js';
import { RevokeInboundHookHandler } from './commands/revoke-inbound-hook.handler.js';
import { RevokeSubscriptionHandler } from './commands/revoke-subscription.handler.js';
import { VerifyDeliveryHandler } from './commands/verify-delivery.handler.js';
import { allowedCidrs, WebhookConfig } from './config.js';
import { GetHookForGatewayHandler } from './queries/get-hook-for-gateway.handler.js';
import { ListInboundHooksHandler } from './queries/list-inbound-hooks.handler.js';
import { ListSubscriptionsHandler } from './queries/list-subscriptions.handler.js';
import { SubscriptionProvisioner } from './subscriptions/subscription-provisioner.js';

/**
 * Inbound hooks and managed provider subscriptions: creates, lists and revokes them (the latter
 * at the provider too), verifies their deliveries, reports rejected ones.
 */
@Module({
  controllers: [
    CreateInboundHookHandler,
    ListInboundHooksHandler,
    RevokeInboundHookHandler,
    GetHookForGatewayHandler,
    VerifyDeliveryHandler,
    RecordRejectedDeliveryHandler,
    CreateSubscriptionHandler,
    ListSubscriptionsHandler,
    RetrySubscriptionHandler,
    RevokeSubscriptionHandler,
  ],
  providers: [
    { provide: WebhookConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(WebhookConfig, env) },
    { provide: SecretBox, inject: [WebhookConfig], useFactory: (config: WebhookConfig) => new SecretBox(config.SECRETS_KEY) },
    { provide: OutboundGuard, inject: [WebhookConfig], useFactory: (config: WebhookConfig) => new OutboundGuard({ allowedCidrs: allowedCidrs(config) }) },
    SubscriptionProvisioner,
  ],
})
export class WebhookModule {}
