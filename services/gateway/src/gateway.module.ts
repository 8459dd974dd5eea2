import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { AccessDirectory } from './access/access-directory.js';
import { DeliveryVerifier } from './access/delivery-verifier.js';
import { HookDirectory } from './access/hook-directory.js';
import { InvocationAccess } from './access/invocation-access.js';
import { ApiTokenFormat } from './api-tokens/api-token-format.js';
import { ChangePropagation } from './changes/change-propagation.js';
import { ProjectVersions } from './changes/project-versions.js';
import { AddMemberHandler } from './commands/add-member.handler.js';
import { BulkReplayDeadLetterEventsHandler } from './commands/bulk-replay-dead-letter-events.handler.js';
import { CreateApiTokenHandler } from './commands/create-api-token.handler.js';
import { CreateWebhookHandler } from './commands/create-webhook.handler.js';
import { CreateWebhookSubscriptionHandler } from './commands/create-webhook-subscription.handler.js';
import { RetryWebhookSubscriptionHandler } from './commands/retry-webhook-subscription.handler.js';
import { RevokeWebhookSubscriptionHandler } from './commands/revoke-webhook-subscription.handler.js';
import { CreateOrganizationHandler } from './commands/create-organization.handler.js';
import { CreateProjectHandler } from './commands/create-project.handler.js';
import { DecideInvocationApprovalHandler } from './commands/decide-invocation-approval.handler.js';
import { CreateTemplateHandler } from './commands/create-template.handler.js';
import { DeleteProjectHandler } from './commands/delete-project.handler.js';
import { DeleteTemplateHandler } from './commands/delete-template.handler.js';
import { ModifyInvocationHandler } from './commands/modify-invocation.handler.js';
import { ReceiveHookDeliveryHandler } from './commands/receive-hook-delivery.handler.js';
import { RevokeWebhookHandler } from './commands/revoke-webhook.handler.js';
import { PublishDefinitionHandler } from './commands/publish-definition.handler.js';
import { RemovePollingTriggerHandler } from './commands/remove-polling-trigger.handler.js';
import { ReplayDeadLetterEventHandler } from './commands/replay-dead-letter-event.handler.js';
import { RevokeApiTokenHandler } from './commands/revoke-api-token.handler.js';
import { SaveDefinitionHandler } from './commands/save-definition.handler.js';
import { SavePollingTriggerHandler } from './commands/save-polling-trigger.handler.js';
import { SetPlanHandler } from './commands/set-plan.handler.js';
import { StartRunHandler } from './commands/start-run.handler.js';
import { UpdateApiSettingsHandler } from './commands/update-api-settings.handler.js';
import { UpdateTemplateHandler } from './commands/update-template.handler.js';
import { GatewayConfig } from './config.js';
import { ApiExceptionFilter } from './http/api-exception.filter.js';
import { ConsoleAccess } from './http/console/console-access.js';
import { ConsoleSignInModule } from './http/console-auth/console-sign-in.module.js';
import { ConsoleAuthGuard } from './http/console/console-auth.guard.js';
import { ConsoleReadsController } from './http/console/console-reads.controller.js';
import { RequestExamplesController } from './http/console/request-examples.controller.js';
import { TemplatesController } from './http/console/templates.controller.js';
import { InvocationLogsController } from './http/console/invocation-logs.controller.js';
import { OrganizationsController } from './http/console/organizations.controller.js';
import { ProjectDeadLettersController } from './http/console/project-dead-letters.controller.js';
import { ProjectPollingTriggersController } from './http/console/project-polling-triggers.controller.js';
import { ProjectsController } from './http/console/projects.controller.js';
import { WebhookSubscriptionsController } from './http/console/webhook-subscriptions.controller.js';
import { WebhooksController } from './http/console/webhooks.controller.js';
import { HooksController } from './http/hooks/hooks.controller.js';
import { DeadLettersController } from './http/external/dead-letters.controller.js';
import { ExternalApiGuard } from './http/external/external-api.guard.js';
import { InvocationsController } from './http/external/invocations.controller.js';
import { PollingController } from './http/external/polling.controller.js';
import { RateLimitGuard } from './http/external/rate-limit.guard.js';
import { RunsController } from './http/external/runs.controller.js';
import { TokenOrConsoleGuard } from './http/token-or-console.guard.js';
import { QueryTextPipe } from './http/query-text.pipe.js';
import { BodyValidationPipe } from './http/validation.pipe.js';
import { BuildRequestExampleHandler } from './queries/build-request-example.handler.js';
import { GetApiSettingsHandler } from './queries/get-api-settings.handler.js';
import { GetInvocationHandler } from './queries/get-invocation.handler.js';
import { GetPlanHandler } from './queries/get-plan.handler.js';
import { GetInvocationMetricsHandler } from './queries/get-invocation-metrics.handler.js';
import { ListInvocationLogsHandler } from './queries/list-invocation-logs.handler.js';
import { GetPollingTriggersHandler } from './queries/get-polling-triggers.handler.js';
import { GetTemplateHandler } from './queries/get-template.handler.js';
import { ListApiTokensHandler } from './queries/list-api-tokens.handler.js';
import { ListDeadLetterEventsHandler } from './queries/list-dead-letter-events.handler.js';
import { ListOrganizationsHandler } from './queries/list-organizations.handler.js';
import { ListProjectsHandler } from './queries/list-projects.handler.js';
import { ListTemplatesHandler } from './queries/list-templates.handler.js';
import { ListWebhookSubscriptionsHandler } from './queries/list-webhook-subscriptions.handler.js';
import { ListWebhooksHandler } from './queries/list-webhooks.handler.js';
import { RateLimitConfig } from './rate-limits/rate-limit.config.js';
import { RateLimitCounters } from './rate-limits/rate-limit-counters.js';
import { RateLimitPolicies } from './rate-limits/rate-limit-policies.js';
import { ApiTokenRepository } from './repositories/api-token.repository.js';
import { OrganizationRepository } from './repositories/organization.repository.js';
import { ProjectApiSettingsRepository } from './repositories/project-api-settings.repository.js';
import { ProjectRepository } from './repositories/project.repository.js';
import { RateLimitCounterRepository } from './repositories/rate-limit-counter.repository.js';
import { RequestTemplateRepository } from './repositories/request-template.repository.js';
import { ServiceClient } from './service-client/service-client.js';
import { TokenUsageRecorder } from './token-usage/token-usage.recorder.js';

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
const consoleReadHandlers = [ListOrganizationsHandler, GetPlanHandler, ListProjectsHandler];
// The template library and the request example builder.
const templateHandlers = [ListTemplatesHandler, GetTemplateHandler, CreateTemplateHandler, UpdateTemplateHandler, DeleteTemplateHandler, BuildRequestExampleHandler];
// The console's logs and invocation health.
const runLogHandlers = [ListInvocationLogsHandler, GetInvocationMetricsHandler];
const repositories = [OrganizationRepository, ProjectRepository, ProjectApiSettingsRepository, ApiTokenRepository, RateLimitCounterRepository];

/** The HTTP edge: console API for signed-in users, external API for API tokens. */
@Module({
  imports: [ConsoleSignInModule],
  controllers: [
    OrganizationsController,
    ProjectsController,
    RunsController,
    InvocationsController,
    PollingController,
    DeadLettersController,
    ConsoleReadsController,
    TemplatesController,
    RequestExamplesController,
    ProjectPollingTriggersController,
    ProjectDeadLettersController,
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
    ...runLogHandlers,
  ],
})
export class GatewayModule {}
