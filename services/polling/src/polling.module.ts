import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { DeletePollingTriggerHandler } from './commands/delete-polling-trigger.handler.js';
import { RegisterPollingTriggerHandler } from './commands/register-polling-trigger.handler.js';
import { UpdateProjectCopyHandler } from './commands/update-project-copy.handler.js';
import { PollingConfig } from './config.js';
import { ProjectCopies } from './events/project-copies.js';
import { ProjectCopiesProjector } from './events/project-copies.projector.js';
import { Poller } from './polling/poller.js';
import { ListPollingTriggersHandler } from './queries/list-polling-triggers.handler.js';

/** Polls customer endpoints on their interval, dedupes items and hands them to invocation. */
@Module({
  controllers: [
    RegisterPollingTriggerHandler,
    DeletePollingTriggerHandler,
    ListPollingTriggersHandler,
    UpdateProjectCopyHandler,
    ProjectCopiesProjector,
  ],
  providers: [
    { provide: PollingConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(PollingConfig, env) },
    { provide: SecretBox, inject: [PollingConfig], useFactory: (config: PollingConfig) => new SecretBox(config.SECRETS_KEY) },
    {
      provide: OutboundGuard,
      inject: [PollingConfig],
      useFactory: (config: PollingConfig) =>
        new OutboundGuard({
          allowedCidrs: (config.OUTBOUND_ALLOWED_CIDRS ?? '').split(',').map((entry) => entry.trim()).filter(Boolean),
          defaultTimeoutMs: config.POLLING_REQUEST_TIMEOUT_MS,
          maxResponseBytes: config.POLLING_MAX_RESPONSE_BYTES,
        }),
    },
    ProjectCopies,
    Poller,
  ],
})
export class PollingModule {}
