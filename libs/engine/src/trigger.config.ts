import {
  isAutomationDefinition,
  isChatbotDefinition,
  type CallbackOverride,
  type Definition,
  type EnrollmentPolicy,
  type ExpressionSource,
  type OnErrorPolicy,
  type ProjectType,
  type RetryPolicy,
  type TriggerConfig,
} from './definition.types.js';

/** A client's `triggerKey` must equal the trigger's key; this is the key when none is set. */
export const DEFAULT_TRIGGER_KEY = 'external_event';

/** Top-level keys a chatbot flow trigger requires when its trigger sets no expectedPayload. */
export const CHATBOT_DEFAULT_EXPECTED_KEYS: readonly string[] = ['event', 'customerId'];

/**
 * A trigger with its defaults applied. Policies, enrollment key, callback and retry stay
 * undefined when the trigger does not set them: the caller falls through to the request body or
 * the project's API settings.
 */
export interface ResolvedTrigger {
  readonly externalEnabled: boolean;
  readonly key: string;
  /** Top-level payload keys every trigger call must contain. */
  readonly expectedKeys: readonly string[];
  readonly enrollmentPolicy?: EnrollmentPolicy;
  readonly enrollmentKey?: ExpressionSource;
  readonly onErrorPolicy?: OnErrorPolicy;
  readonly callback?: CallbackOverride;
  readonly retry?: RetryPolicy;
}

/** Applies the defaults of a flow (CHATBOT) or workflow (AUTOMATION) trigger. */
export function resolveTrigger(projectType: ProjectType, trigger: TriggerConfig | undefined): ResolvedTrigger {
  const defaultKeys = projectType === 'CHATBOT' ? CHATBOT_DEFAULT_EXPECTED_KEYS : [];
  return {
    externalEnabled: trigger?.externalEnabled ?? true,
    key: trigger?.key ?? DEFAULT_TRIGGER_KEY,
    expectedKeys: trigger?.expectedPayload === undefined ? defaultKeys : Object.keys(trigger.expectedPayload),
    ...(trigger?.enrollmentPolicy === undefined ? {} : { enrollmentPolicy: trigger.enrollmentPolicy }),
    ...(trigger?.enrollmentKey === undefined ? {} : { enrollmentKey: trigger.enrollmentKey }),
    ...(trigger?.onErrorPolicy === undefined ? {} : { onErrorPolicy: trigger.onErrorPolicy }),
    ...(trigger?.callback === undefined ? {} : { callback: trigger.callback }),
    ...(trigger?.retry === undefined ? {} : { retry: trigger.retry }),
  };
}

/**
 * The top-level keys a trigger call must carry: for a chatbot, those of its flow trigger
 * (`event`, `customerId` unless the trigger sets expectedPayload); for an automation, the keys of
 * `workflow.trigger.expectedPayload`, or none.
 */
export function expectedTriggerKeys(projectType: ProjectType, definition: Definition): readonly string[] {
  if (projectType === 'CHATBOT') {
    const trigger = isChatbotDefinition(definition) ? definition.flow?.trigger : undefined;
    return resolveTrigger('CHATBOT', trigger).expectedKeys;
  }
  const trigger = isAutomationDefinition(definition) ? definition.workflow.trigger : undefined;
  return resolveTrigger('AUTOMATION', trigger).expectedKeys;
}
