import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import type { TokenScope } from '../../entities/api-token.entity.js';
import type { ProjectType } from '../../entities/project.entity.js';
import { API_ERRORS } from '../api-error.js';
import { ExternalApiGuard } from './external-api.guard.js';

/** Which project types a route serves; the message for any other type. */
export type ProjectTypeRule = (type: ProjectType) => string | undefined;

export interface ExternalRouteOptions {
  /** The scope the token must carry; omitted where it depends on the run (invocation routes). */
  scope?: TokenScope;
  projectType?: ProjectTypeRule;
}

export const EXTERNAL_ROUTE = 'runline:external-route';

/** Marks a route as part of the external API: it passes the full token pipeline first. */
export const ExternalRoute = (options: ExternalRouteOptions) =>
  applyDecorators(SetMetadata(EXTERNAL_ROUTE, options), UseGuards(ExternalApiGuard));

export const chatbotOnlyForBots: ProjectTypeRule = (type) => (type === 'CHATBOT' ? undefined : API_ERRORS.botChatbotOnly);

export const chatbotOnlyForFlows: ProjectTypeRule = (type) =>
  type === 'CHATBOT' ? undefined : type === 'AUTOMATION' ? API_ERRORS.automationsUseAutomationApi : API_ERRORS.typeNotSupported;

export const automationOnly: ProjectTypeRule = (type) => (type === 'AUTOMATION' ? undefined : API_ERRORS.automationOnly);
