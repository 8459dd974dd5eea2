import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ENVIRONMENT, loadConfig, SecretBox } from '@runline/runtime';
import { ApiTokenFormat } from './api-tokens/api-token-format.js';
import { AddMemberHandler } from './commands/add-member.handler.js';
import { CreateApiTokenHandler } from './commands/create-api-token.handler.js';
import { CreateOrganizationHandler } from './commands/create-organization.handler.js';
import { CreateProjectHandler } from './commands/create-project.handler.js';
import { DeleteProjectHandler } from './commands/delete-project.handler.js';
import { ChangePropagation } from './changes/change-propagation.js';
import { ProjectVersions } from './changes/project-versions.js';
import { ModifyInvocationHandler } from './commands/modify-invocation.handler.js';
import { PublishDefinitionHandler } from './commands/publish-definition.handler.js';
import { RevokeApiTokenHandler } from './commands/revoke-api-token.handler.js';
import { SaveDefinitionHandler } from './commands/save-definition.handler.js';
import { SetPlanHandler } from './commands/set-plan.handler.js';
import { UpdateApiSettingsHandler } from './commands/update-api-settings.handler.js';
import { GatewayConfig } from './config.js';
import { ApiExceptionFilter } from './http/api-exception.filter.js';
import { ConsoleAccess } from './http/console/console-access.js';
import { ConsoleAuthGuard } from './http/console/console-auth.guard.js';
import { OrganizationsController } from './http/console/organizations.controller.js';
import { ProjectsController } from './http/console/projects.controller.js';
import { AccessDirectory } from './http/external/access-directory.js';
import { ExternalApiGuard } from './http/external/external-api.guard.js';
import { InvocationsController } from './http/external/invocations.controller.js';
import { RateLimitConfig } from './http/external/rate-limits/rate-limit.config.js';
import { RateLimitCounters } from './http/external/rate-limits/rate-limit-counters.js';
import { RateLimitGuard } from './http/external/rate-limits/rate-limit.guard.js';
import { RateLimitPolicies } from './http/external/rate-limits/rate-limit-policies.js';
import { RunRequests } from './http/external/run-requests.js';
import { RunsController } from './http/external/runs.controller.js';
import { DeadLettersHandler } from './commands/dead-letters.handler.js';
import { PollingTriggersHandler } from './commands/polling-triggers.handler.js';
import { DeadLettersController } from './http/external/dead-letters.controller.js';
import { PollingController } from './http/external/polling.controller.js';
import { TokenUsageRecorder } from './http/external/token-usage.recorder.js';
import { BodyValidationPipe } from './http/validation.pipe.js';
import { GetApiSettingsHandler } from './queries/get-api-settings.handler.js';
import { GetInvocationHandler } from './queries/get-invocation.handler.js';
import { ListApiTokensHandler } from './queries/list-api-tokens.handler.js';

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
  ModifyInvocationHandler,
];
const queryHandlers = [GetApiSettingsHandler, ListApiTokensHandler, GetInvocationHandler];

/** The HTTP edge: console API for signed-in users, external API for API tokens. */
@Module({
  controllers: [OrganizationsController, ProjectsController, RunsController, InvocationsController, PollingController, DeadLettersController],
  providers: [
    { provide: GatewayConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(GatewayConfig, env) },
    { provide: SecretBox, inject: [GatewayConfig], useFactory: (config: GatewayConfig) => new SecretBox(config.SECRETS_KEY) },
    { provide: ApiTokenFormat, inject: [GatewayConfig], useFactory: (config: GatewayConfig) => new ApiTokenFormat(config.API_TOKEN_PREFIX) },
    { provide: APP_FILTER, useClass: ApiExceptionFilter },
    { provide: APP_PIPE, useClass: BodyValidationPipe },
    AccessDirectory,
    TokenUsageRecorder,
    ConsoleAccess,
    ConsoleAuthGuard,
    ExternalApiGuard,
    RunRequests,
    // Polling triggers and dead letters, answered by their services (issue 6).
    PollingTriggersHandler,
    DeadLettersHandler,
    // Per-token rate limits (issue 7).
    { provide: RateLimitConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(RateLimitConfig, env) },
    RateLimitPolicies,
    RateLimitCounters,
    RateLimitGuard,
    ChangePropagation,
    ProjectVersions,
    ...commandHandlers,
    ...queryHandlers,
  ],
})
export class GatewayModule {}
