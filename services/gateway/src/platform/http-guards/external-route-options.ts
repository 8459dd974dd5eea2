import type { TokenScope } from '../store/api-token.entity.js';
import type { ProjectType } from '../store/project.entity.js';
import { API_ERRORS } from '../errors/error-messages.js';

/** Which project types a route serves; the message for any other type. */
export type ProjectTypeRule = (type: ProjectType) => string | undefined;

/** What @ExternalRoute asks of a call, read by ExternalApiGuard. */
export interface ExternalRouteOptions {
  /** The scope the token must carry; omitted where it depends on the run (invocation routes). */
  scope?: TokenScope;
  projectType?: ProjectTypeRule;
}

/** Metadata key under which @ExternalRoute leaves its options for the guard. */
export const EXTERNAL_ROUTE = 'runline:external-route';

export const chatbotOnlyForBots: ProjectTypeRule = (type) => (type === 'CHATBOT' ? undefined : API_ERRORS.botChatbotOnly);

export const chatbotOnlyForFlows: ProjectTypeRule = (type) =>
  type === 'CHATBOT' ? undefined : type === 'AUTOMATION' ? API_ERRORS.automationsUseAutomationApi : API_ERRORS.typeNotSupported;

export const automationOnly: ProjectTypeRule = (type) => (type === 'AUTOMATION' ? undefined : API_ERRORS.automationOnly);
