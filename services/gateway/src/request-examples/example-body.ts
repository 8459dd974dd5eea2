import { isAutomationDefinition, isChatbotDefinition, resolveTrigger, type Definition } from '@runline/engine';
import type { RunEndpoint } from '../templates/index.js';

/** Example values for the fields the spec names; a person replaces them with real ones. */
const EXAMPLE = {
  event: 'example_event',
  customerId: 'customer-123',
  message: 'Hello',
  sessionId: 'session-123',
  userId: 'user-123',
  userName: 'Ada',
  platform: 'web',
} as const;

/**
 * The body a request to `endpoint` needs when no template gives one: the keys the Trigger node
 * of `definition` checks, with example values (an expectedPayload's own values where it has
 * them), and the trigger's key as triggerKey. Bot endpoints take the message fields of the
 * spec. `definition` is null when the project has none yet: the spec's defaults apply.
 */
export function exampleBody(endpoint: RunEndpoint, definition: object | null): Record<string, unknown> {
  const document = definition as Definition | null;
  switch (endpoint) {
    case 'bots.message':
      return { message: EXAMPLE.message, sessionId: EXAMPLE.sessionId, userId: EXAMPLE.userId, userName: EXAMPLE.userName, platform: EXAMPLE.platform };
    case 'bots.invoke':
      return { message: EXAMPLE.message, sessionId: EXAMPLE.sessionId, userName: EXAMPLE.userName };
    case 'flows.trigger':
    case 'flows.trigger-async': {
      const trigger = document && isChatbotDefinition(document) ? document.flow?.trigger : undefined;
      const { key } = resolveTrigger('CHATBOT', trigger);
      // Chatbot flows take the payload as top-level fields; event and customerId are the spec's
      // defaults and keep their example values even when the trigger names other keys too.
      const body: Record<string, unknown> = { triggerKey: key, event: EXAMPLE.event, customerId: EXAMPLE.customerId };
      for (const [name, value] of Object.entries(trigger?.expectedPayload ?? {})) if (!Object.hasOwn(body, name)) body[name] = value;
      return body;
    }
    case 'automations.trigger':
    case 'automations.trigger-async': {
      const trigger = document && isAutomationDefinition(document) ? document.workflow.trigger : undefined;
      const { key } = resolveTrigger('AUTOMATION', trigger);
      return { triggerKey: key, event: EXAMPLE.event, payload: { ...trigger?.expectedPayload } };
    }
  }
}
