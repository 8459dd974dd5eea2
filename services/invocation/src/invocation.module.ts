import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { ApplyGatewayChangeHandler } from './commands/apply-gateway-change.handler.js';
import { ModifyInvocationHandler } from './commands/modify-invocation.handler.js';
import { RunInvocationHandler } from './commands/run-invocation.handler.js';
import { StartInvocationHandler } from './commands/start-invocation.handler.js';
import { InvocationConfig } from './config.js';
import { CallbackAttemptedHandler } from './events/callback-attempted.handler.js';
import { GatewayCopies } from './events/gateway-copies.js';
import { GatewayCopiesProjector } from './events/gateway-copies.projector.js';
import { ScheduledJobCancelledHandler } from './events/scheduled-job-cancelled.handler.js';
import { ScheduledJobFiredHandler } from './events/scheduled-job-fired.handler.js';
import { GetInvocationHandler } from './queries/get-invocation.handler.js';
import { BotSessions } from './runs/bot-sessions.js';
import { DefinitionCatalog } from './runs/definition-catalog.js';
import { RunExecutor } from './runs/run-executor.js';
import { RunStarter } from './runs/run-starter.js';
import { RunSweeper } from './runs/run-sweeper.js';
import { SchedulerClient } from './runs/scheduler-jobs.js';

/** Accepts and records runs, executes definitions, starts what the scheduler fires, answers invocation queries. */
@Module({
  controllers: [
    GatewayCopiesProjector,
    ApplyGatewayChangeHandler,
    GetInvocationHandler,
    StartInvocationHandler,
    ModifyInvocationHandler,
    RunInvocationHandler,
    ScheduledJobFiredHandler,
    ScheduledJobCancelledHandler,
    CallbackAttemptedHandler,
  ],
  providers: [
    { provide: InvocationConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(InvocationConfig, env) },
    { provide: SecretBox, inject: [InvocationConfig], useFactory: (config: InvocationConfig) => new SecretBox(config.SECRETS_KEY) },
    {
      provide: OutboundGuard,
      inject: [InvocationConfig],
      useFactory: (config: InvocationConfig) => new OutboundGuard({ allowedCidrs: cidrs(config.OUTBOUND_ALLOWED_CIDRS) }),
    },
    GatewayCopies,
    DefinitionCatalog,
    BotSessions,
    RunExecutor,
    RunStarter,
    RunSweeper,
    SchedulerClient,
  ],
})
export class InvocationModule {}

function cidrs(list: string | undefined): string[] {
  return (list ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
}
