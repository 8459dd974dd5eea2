import { Module } from '@nestjs/common';
import { OutboundGuard } from '@runline/outbound';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { ChangeScheduledRunHandler } from './commands/change-scheduled-run.handler.js';
import { DecideApprovalHandler } from './commands/decide-approval.handler.js';
import { RunInvocationHandler } from './commands/run-invocation.handler.js';
import { StartInvocationHandler } from './commands/start-invocation.handler.js';
import { StoreGatewayChangeHandler } from './commands/store-gateway-change.handler.js';
import { InvocationConfig } from './config.js';
import { CallbackAttemptedHandler } from './events/callback-attempted.handler.js';
import { GatewayCopiesProjector } from './events/gateway-copies.projector.js';
import { ScheduledJobCancelledHandler } from './events/scheduled-job-cancelled.handler.js';
import { ScheduledJobFiredHandler } from './events/scheduled-job-fired.handler.js';
import { ReadQuotaUsageHandler } from './queries/read-quota-usage.handler.js';
import { ListRunLogsHandler } from './queries/list-run-logs.handler.js';
import { ReadRunMetricsHandler } from './queries/read-run-metrics.handler.js';
import { ReadRunViewHandler } from './queries/read-run-view.handler.js';
import { ListRunEventsHandler } from './queries/list-run-events.handler.js';
import { BotSessions } from './runs/bot-sessions.js';
import { DefinitionCatalog } from './runs/definition-catalog.js';
import { GatewayCopies } from './runs/gateway-copies.repository.js';
import { RunExecutor } from './runs/run-executor.js';
import { FlowControl } from './runs/run-flow-control.js';
import { FlowDispatcher } from './runs/flow-dispatcher.js';
import { FairStarts } from './runs/fair-starts.js';
import { RunLease } from './runs/run-lease.js';
import { RunRecorder } from './runs/run-recorder.js';
import { RunProgressPublisher } from './runs/run-progress.publisher.js';
import { RunStarter } from './runs/run-starter.js';
import { RunSweeper } from './runs/run-sweeper.js';
import { SchedulerClient } from './runs/scheduler-client.js';

/** Accepts and records runs, executes definitions, starts what the scheduler fires, answers invocation queries. */
@Module({
  controllers: [
    GatewayCopiesProjector,
    StoreGatewayChangeHandler,
    ReadRunViewHandler,
    ListRunEventsHandler,
    ReadQuotaUsageHandler,
    ListRunLogsHandler,
    ReadRunMetricsHandler,
    StartInvocationHandler,
    ChangeScheduledRunHandler,
    DecideApprovalHandler,
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
    RunLease,
    RunRecorder,
    RunProgressPublisher,
    RunExecutor,
    RunStarter,
    FlowControl,
    FlowDispatcher,
    FairStarts,
    RunSweeper,
    SchedulerClient,
  ],
})
export class InvocationModule {}

function cidrs(list: string | undefined): string[] {
  return (list ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
}
