import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { AccessDirectory } from './platform/access/access-directory.js';
import { DeliveryVerifier } from './hooks/delivery-verifier.js';
import { HookDirectory } from './hooks/hook-directory.js';
import { InvocationAccess } from './platform/access/invocation-access.js';
import { ApiTokenFormat } from './platform/access/api-token-format.js';
import { ChangePropagation } from './platform/changes/change-propagation.js';
import { ProjectVersions } from './platform/changes/project-versions.js';
import { AddMemberHandler } from './organizations/add-member.handler.js';
import { BulkReplayDeadLetterEventsHandler } from './dead-letters/bulk-replay-dead-letter-events.handler.js';
import { CreateApiTokenHandler } from './tokens/create-api-token.handler.js';
import { CreateWebhookHandler } from './hooks/create-webhook.handler.js';
import { CreateWebhookSubscriptionHandler } from './subscriptions/create-webhook-subscription.handler.js';
import { RetryWebhookSubscriptionHandler } from './subscriptions/retry-webhook-subscription.handler.js';
import { RevokeWebhookSubscriptionHandler } from './subscriptions/revoke-webhook-subscription.handler.js';
import { CreateOrganizationHandler } from './organizations/create-organization.handler.js';
import { CreateProjectHandler } from './projects/create-project.handler.js';
import { DecideInvocationApprovalHandler } from './approvals/decide-invocation-approval.handler.js';
import { CreateTemplateHandler } from './templates/create-template.handler.js';
import { DeleteProjectHandler } from './projects/delete-project.handler.js';
import { DeleteTemplateHandler } from './templates/delete-template.handler.js';
import { ModifyInvocationHandler } from './runs/modify-invocation.handler.js';
import { ReceiveHookDeliveryHandler } from './hooks/receive-hook-delivery.handler.js';
import { RevokeWebhookHandler } from './hooks/revoke-webhook.handler.js';
import { PublishDefinitionHandler } from './projects/publish-definition.handler.js';
import { DefinitionHistoryHandler } from './projects/definition-history.handler.js';
import { DefinitionVersionRepository } from './projects/definition-version.repository.js';
import { RemovePollingTriggerHandler } from './polling/remove-polling-trigger.handler.js';
import { ReplayDeadLetterEventHandler } from './dead-letters/replay-dead-letter-event.handler.js';
import { RevokeApiTokenHandler } from './tokens/revoke-api-token.handler.js';
import { SaveDefinitionHandler } from './projects/save-definition.handler.js';
import { SavePollingTriggerHandler } from './polling/save-polling-trigger.handler.js';
import { SetPlanHandler } from './organizations/set-plan.handler.js';
import { StartRunHandler } from './runs/start-run.handler.js';
import { UpdateApiSettingsHandler } from './settings/update-api-settings.handler.js';
import { UpdateTemplateHandler } from './templates/update-template.handler.js';
import { GatewayConfig } from './config.js';
import { ApiExceptionFilter } from './platform/http-pipeline/api-exception.filter.js';
import { ConsoleAccess } from './platform/http-guards/console-access.js';
import { ConsoleSignInModule } from './sign-in/console-sign-in.module.js';
import { ConsoleAuthGuard } from './platform/http-guards/console-auth.guard.js';
import { RequestExamplesController } from './request-examples/request-examples.controller.js';
import { TemplatesController } from './templates/templates.controller.js';
import { InvocationLogsController } from './runs/invocation-logs.controller.js';
import { OrganizationsController } from './organizations/organizations.controller.js';
import { ProjectDeadLettersController } from './dead-letters/project-dead-letters.controller.js';
import { ProjectPollingTriggersController } from './polling/project-polling-triggers.controller.js';
import { ProjectsController } from './projects/projects.controller.js';
import { ApiSettingsController } from './settings/api-settings.controller.js';
import { ApiTokensController } from './tokens/api-tokens.controller.js';
import { WebhookSubscriptionsController } from './subscriptions/webhook-subscriptions.controller.js';
import { WebhooksController } from './hooks/webhooks.controller.js';
import { HooksController } from './hooks/hooks.controller.js';
import { DeadLettersController } from './dead-letters/dead-letters.controller.js';
import { ExternalApiGuard } from './platform/http-guards/external-api.guard.js';
import { InvocationsController } from './runs/invocations.controller.js';
import { PollingController } from './polling/polling.controller.js';
import { BackfillScheduleHandler } from './schedules/backfill-schedule.handler.js';
import { ChangeScheduleHandler } from './schedules/change-schedule.handler.js';
import { GetSchedulesHandler } from './schedules/get-schedules.handler.js';
import { SchedulesController } from './schedules/schedules.controller.js';
import { TriggerScheduleHandler } from './schedules/trigger-schedule.handler.js';
import { RateLimitGuard } from './platform/http-guards/rate-limit.guard.js';
import { RunsController } from './runs/runs.controller.js';
import { RunEventsFeed } from './run-streams/run-events-feed.js';
import { RunHistoryClient } from './run-streams/run-history.client.js';
import { RunEndWaiter } from './run-streams/run-end-waiter.js';
import { RunStreamsController } from './run-streams/run-streams.controller.js';
import { ProjectRunsStreamController } from './run-streams/project-runs-stream.controller.js';
import { RunLogRowsClient } from './run-streams/run-log-rows.client.js';
import { TokenOrConsoleGuard } from './platform/http-guards/token-or-console.guard.js';
import { QueryTextPipe } from './platform/http-pipeline/query-text.pipe.js';
import { BodyValidationPipe } from './platform/http-pipeline/validation.pipe.js';
import { BuildRequestExampleHandler } from './request-examples/build-request-example.handler.js';
import { GetApiSettingsHandler } from './settings/get-api-settings.handler.js';
import { GetInvocationHandler } from './runs/get-invocation.handler.js';
import { GetPlanHandler } from './organizations/get-plan.handler.js';
import { GetInvocationMetricsHandler } from './runs/get-invocation-metrics.handler.js';
import { ListInvocationLogsHandler } from './runs/list-invocation-logs.handler.js';
import { GetPollingTriggersHandler } from './polling/get-polling-triggers.handler.js';
import { GetTemplateHandler } from './templates/get-template.handler.js';
import { ListApiTokensHandler } from './tokens/list-api-tokens.handler.js';
import { ListDeadLetterEventsHandler } from './dead-letters/list-dead-letter-events.handler.js';
import { ListOrganizationsHandler } from './organizations/list-organizations.handler.js';
import { ListProjectsHandler } from './projects/list-projects.handler.js';
import { ListTemplatesHandler } from './templates/list-templates.handler.js';
import { ListWebhookSubscriptionsHandler } from './subscriptions/list-webhook-subscriptions.handler.js';
import { ListWebhooksHandler } from './hooks/list-webhooks.handler.js';
import { RateLimitConfig } from './platform/rate-limits/rate-limit.config.js';
import { RateLimitCounters } from './platform/rate-limits/rate-limit-counters.js';
import { RateLimitPolicies } from './platform/rate-limits/rate-limit-policies.js';
import { ApiTokenRepository } from './platform/store/api-token.repository.js';
import { OrganizationRepository } from './platform/store/organization.repository.js';
import { ProjectApiSettingsRepository } from './platform/store/project-api-settings.repository.js';
import { ProjectRepository } from './platform/store/project.repository.js';
import { RateLimitCounterRepository } from './platform/rate-limits/rate-limit-counter.repository.js';
import { RequestTemplateRepository } from './templates/request-template.repository.js';
import { ServiceClient } from './platform/service-client/service-client.js';
import { TokenUsageRecorder } from './platform/access/token-usage.recorder.js';

const commandHandlers = [
  CreateOrganizationHandler,
  SetPlanHandler,
  AddMemberHandler,
  CreateProjectHandler,
  SaveDefinitionHandler,
  PublishDefinitionHandler,
  UpdateApiSettingsHandler,
  CreateApiTokenHandler,
  RevokeApiTokenHandler,
  DeleteProjectHandler,
  StartRunHandler,
  ModifyInvocationHandler,
  DecideInvocationApprovalHandler,
  SavePollingTriggerHandler,
  RemovePollingTriggerHandler,
  ReplayDeadLetterEventHandler,
  BulkReplayDeadLetterEventsHandler,
  // Inbound hooks (DESIGN section 9).
  CreateWebhookHandler,
  RevokeWebhookHandler,
  CreateWebhookSubscriptionHandler,
  RetryWebhookSubscriptionHandler,
  RevokeWebhookSubscriptionHandler,
  ReceiveHookDeliveryHandler,
];
const queryHandlers = [GetApiSettingsHandler, ListApiTokensHandler, GetInvocationHandler, GetPollingTriggersHandler, ListDeadLetterEventsHandler, ListWebhooksHandler, ListWebhookSubscriptionsHandler];
// The console's reads (organizations, plan and usage, projects, definitions).
const consoleReadHandlers = [ListOrganizationsHandler, GetPlanHandler, ListProjectsHandler, DefinitionHistoryHandler];
// The template library and the request example builder.
const templateHandlers = [ListTemplatesHandler, GetTemplateHandler, CreateTemplateHandler, UpdateTemplateHandler, DeleteTemplateHandler, BuildRequestExampleHandler];
// The console's logs and invocation health.
const runLogHandlers = [ListInvocationLogsHandler, GetInvocationMetricsHandler];
// Schedule triggers of published automations, kept by the scheduler (DESIGN section 12).
const scheduleHandlers = [GetSchedulesHandler, ChangeScheduleHandler, TriggerScheduleHandler, BackfillScheduleHandler];
const repositories = [OrganizationRepository, ProjectRepository, ProjectApiSettingsRepository, ApiTokenRepository, RateLimitCounterRepository];

/** The HTTP edge: console API for signed-in users, external API for API tokens. */
@Module({
  imports: [ConsoleSignInModule],
  controllers: [
    OrganizationsController,
    ProjectsController,
    ApiSettingsController,
    ApiTokensController,
    RunsController,
    // Before InvocationsController: its `:invocationId` must not take `…/events`.
    RunStreamsController,
    ProjectRunsStreamController,
    InvocationsController,
    PollingController,
    DeadLettersController,
    TemplatesController,
    RequestExamplesController,
    ProjectPollingTriggersController,
    ProjectDeadLettersController,
    SchedulesController,
    InvocationLogsController,
    WebhooksController,
    WebhookSubscriptionsController,
    HooksController,
  ],
  providers: [
    { provide: GatewayConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(GatewayConfig, env) },
    { provide: SecretBox, inject: [GatewayConfig], useFactory: (config: GatewayConfig) => new SecretBox(config.SECRETS_KEY) },
    { provide: ApiTokenFormat, inject: [GatewayConfig], useFactory: (config: GatewayConfig) => new ApiTokenFormat(config.API_TOKEN_PREFIX) },
    { provide: APP_FILTER, useClass: ApiExceptionFilter },
    { provide: APP_PIPE, useClass: QueryTextPipe },
    { provide: APP_PIPE, useClass: BodyValidationPipe },
    AccessDirectory,
    // Inbound hooks verified from the gateway's own copies (DESIGN section 9).
    HookDirectory,
    DeliveryVerifier,
    InvocationAccess,
    // Realtime (DESIGN section 14): the replica's one subscription to the runs' events.
    RunEventsFeed,
    RunHistoryClient,
    RunEndWaiter,
    RunLogRowsClient,
    TokenUsageRecorder,
    ConsoleAccess,
    ConsoleAuthGuard,
    ExternalApiGuard,
    TokenOrConsoleGuard,
    ServiceClient,
    // Per-token rate limits: the effective policy per project, and the counters every replica shares.
    { provide: RateLimitConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(RateLimitConfig, env) },
    RateLimitPolicies,
    RateLimitCounters,
    RateLimitGuard,
    ChangePropagation,
    ProjectVersions,
    ...repositories,
    ...commandHandlers,
    ...queryHandlers,
    ...consoleReadHandlers,
    ...templateHandlers,
    RequestTemplateRepository,
    DefinitionVersionRepository,
    ...runLogHandlers,
    ...scheduleHandlers,
  ],
})
export class GatewayModule {}
