import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig } from '@runline/runtime';
import { ConsoleOidcConfig } from './console-oidc.config.js';
import { ConsoleSignInController } from './console-sign-in.controller.js';
import { ConsoleSignIn } from './console-sign-in.js';

/**
 * Signing in to the web console with an OpenID Connect provider (when CONSOLE_OIDC_* are set),
 * ending in a console JWT. Its routes are the browser's, so they stay out of the API document.
 */
@Module({
  controllers: [ConsoleSignInController],
  providers: [
    { provide: ConsoleOidcConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(ConsoleOidcConfig, env) },
    {
      provide: OutboundGuard,
      inject: [ConsoleOidcConfig],
      useFactory: (config: ConsoleOidcConfig) =>
        new OutboundGuard({ allowedCidrs: (config.OUTBOUND_ALLOWED_CIDRS ?? '').split(',').map((entry) => entry.trim()).filter(Boolean) }),
    },
    ConsoleSignIn,
  ],
})
export class ConsoleSignInModule {}
