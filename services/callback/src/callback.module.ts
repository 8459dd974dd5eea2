import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { DeliverCallbackHandler } from './commands/deliver-callback.handler.js';
import { allowedCidrs, CallbackConfig } from './config.js';
import { DeliveryDispatcher } from './deliveries/delivery-dispatcher.js';

/** Signs and delivers run-finished callbacks and records every attempt. */
@Module({
  controllers: [DeliverCallbackHandler],
  providers: [
    { provide: CallbackConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(CallbackConfig, env) },
    { provide: SecretBox, inject: [CallbackConfig], useFactory: (config: CallbackConfig) => new SecretBox(config.SECRETS_KEY) },
    {
      provide: OutboundGuard,
      inject: [CallbackConfig],
      useFactory: (config: CallbackConfig) =>
        new OutboundGuard({ allowedCidrs: allowedCidrs(config), maxSocketsPerAddress: config.CALLBACK_CONNECTIONS_PER_RECEIVER }),
    },
    DeliveryDispatcher,
  ],
})
export class CallbackModule {}
