import { Module } from '@nestjs/common';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { BulkReplayDeadLettersHandler } from './commands/bulk-replay-dead-letters.handler.js';
import { ReplayDeadLetterHandler } from './commands/replay-dead-letter.handler.js';
import { DeadLetterConfig } from './config.js';
import { ClaimedReplays } from './dead-letters/claimed-replays.js';
import { DeadLetterMetrics } from './dead-letters/dead-letter-metrics.js';
import { ReplayRecovery } from './dead-letters/replay-recovery.js';
import { ReplayRuns } from './dead-letters/replay-runs.js';
import { HookDeliveryRejectedHandler } from './events/hook-delivery-rejected.handler.js';
import { InvocationRetriesExhaustedHandler } from './events/invocation-retries-exhausted.handler.js';
import { PollFailedHandler } from './events/poll-failed.handler.js';
import { PolledItemRunFailedHandler } from './events/polled-item-run-failed.handler.js';
import { ListDeadLettersHandler } from './queries/list-dead-letters.handler.js';

/** Records failures as dead letters, lists them, replays each at most once. */
@Module({
  controllers: [PollFailedHandler, PolledItemRunFailedHandler, InvocationRetriesExhaustedHandler, HookDeliveryRejectedHandler, ListDeadLettersHandler, ReplayDeadLetterHandler, BulkReplayDeadLettersHandler],
  providers: [
    { provide: DeadLetterConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(DeadLetterConfig, env) },
    { provide: SecretBox, inject: [DeadLetterConfig], useFactory: (config: DeadLetterConfig) => new SecretBox(config.SECRETS_KEY) },
    ReplayRuns,
    ClaimedReplays,
    ReplayRecovery,
    DeadLetterMetrics,
  ],
})
export class DeadLetterModule {}
