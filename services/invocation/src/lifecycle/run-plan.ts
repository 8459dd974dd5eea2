/**
 * From an accepted request to what a run needs: which graph, what the expressions see (for
 * flows and polled items, `payload` is the body's top-level fields less the control fields;
 * for automations, the body's `payload` object, with `event` beside it in `input`; for bots,
 * `input` holds message, sessionId, userId, userName and platform), the policies and callback
 * resolved request → trigger → project default, the retry setting, the trigger checks, and
 * what the run's first event records of the request. Pure apart from evaluating an
 * enrollment-key expression.
 */
import type { StartInvocationRequest } from '@runline/contracts';
import {
  evaluate,
  validateDefinition,
  type CompiledDefinition,
  type CompiledTrigger,
  type EnrollmentPolicy,
  type GraphName,
  type JsonValue,
  type OnErrorPolicy,
  type ProjectType,
} from '@runline/engine';
import { redactSecrets } from '@runline/observability';
import type { RequestInfo, RunModeName, TargetType } from './invocation-event.js';
import type { ScheduleFireInfo } from './schedule-fires.js';

export const GRAPH_OF_TARGET: Record<TargetType, GraphName> = { BOT: 'bot', FLOW: 'flow', AUTOMATION: 'workflow' };

/** Body fields that steer the call and are not part of a flow's payload. */
export const CONTROL_FIELDS = [
  'triggerKey',
  'dryRun',
  'webhookUrl',
  'webhookSecret',
  'runAt',
  'delaySeconds',
  'enrollmentPolicy',
  'onErrorPolicy',
] as const;

/**
 * Only async automation runs are retried (and dead-lettered after their last attempt); a sync
 * caller gets the failure in the answer.
 */
export function retriesAutomatically(plan: Pick<RunPlan, 'mode' | 'target'>): boolean {
  return plan.mode === 'ASYNC' && plan.target === 'AUTOMATION';
}

/** An automation run that fails is not retried unless its trigger sets `retry`. */
export const DEFAULT_RETRY = { maxAttempts: 1, backoffSeconds: 0 } as const;

/** The project's settings as the invocation service keeps them (from gateway events). */
export interface ProjectDefaults {
  externalApiEnabled: boolean;
  defaultEnrollmentPolicy: EnrollmentPolicy;
  defaultOnErrorPolicy: OnErrorPolicy;
  defaultCallbackUrl: string | null;
  /** Already opened (unsealed) by the caller. */
  defaultCallbackSecret: string | null;
}

export interface BotSessionRef {
  id: string;
  userId: string | null;
  userName: string | null;
  platform: string | null;
}

/** Everything a run needs, kept sealed with the invocation (it holds the request unredacted). */
export interface RunPlan {
  target: TargetType;
  graph: GraphName;
  mode: RunModeName;
  /** Published version to run, or 0 with `draftDefinition` for an automation's draft. */
  definitionVersion: number;
  draftDefinition: string | null;
  /** The request body as received. */
  body: Record<string, unknown>;
  payload: Record<string, unknown>;
  input: Record<string, unknown>;
  session: BotSessionRef | null;
  enrollmentPolicy: EnrollmentPolicy | null;
  /** Who ONE_TIME enrolls: the enrollment key's value, else payload.customerId; null = nobody to enroll. */
  enrollmentSubject: string | null;
  onErrorPolicy: OnErrorPolicy;
  callback: { url: string | null; secret: string | null };
  retry: { maxAttempts: number; backoffSeconds: number };
  triggerKey: string;
}

/** The trigger checks' verdict; also a dry run's `result.validation`. */
export interface TriggerValidation {
  valid: boolean;
  expectedKeys: string[];
  actualKeys: string[];
  missingKeys: string[];
  /** Why the request fails the checks, one sentence per reason. */
  errors: string[];
}

/** The request cannot run: no valid definition (its message is the run's failure). */
export class DefinitionUnavailableError extends Error {}

/** A draft (automation test run): validated and compiled for this run only. */
export function compileDraft(projectType: ProjectType, json: string): CompiledDefinition {
  let document: unknown;
  try {
    document = JSON.parse(json);
  } catch {
    throw new DefinitionUnavailableError('The project has no valid draft definition');
  }
  const validation = validateDefinition(projectType, document);
  if (!validation.ok) throw new DefinitionUnavailableError(`The draft definition is invalid: ${validation.summary}`);
  return validation.compiled;
}

export interface PlanInput {
  target: TargetType;
  mode: RunModeName;
  body: Record<string, unknown>;
  compiled: CompiledDefinition;
  definitionVersion: number;
  draftDefinition: string | null;
  project: ProjectDefaults;
  /** Bot runs: the session the message belongs to. */
  session: BotSessionRef | null;
}

export async function planRun(input: PlanInput): Promise<RunPlan> {
  const { target, body, project } = input;
  const graph = GRAPH_OF_TARGET[target];
  const trigger = input.compiled.graphs[graph]?.trigger;
  const payload = payloadOf(target, body);
  const runInput = inputOf(target, body, input.session);
  const enrollmentPolicy = target === 'BOT' ? null : (policy(body.enrollmentPolicy, ['ONE_TIME', 'EVERY_MATCH']) ?? trigger?.enrollmentPolicy ?? project.defaultEnrollmentPolicy);
  const onErrorPolicy = policy(body.onErrorPolicy, ['ABORT', 'CONTINUE']) ?? trigger?.onErrorPolicy ?? project.defaultOnErrorPolicy;
  const requestUrl = typeof body.webhookUrl === 'string' && body.webhookUrl !== '' ? body.webhookUrl : undefined;
  const requestSecret = typeof body.webhookSecret === 'string' && body.webhookSecret !== '' ? body.webhookSecret : undefined;
  return {
    target,
    graph,
    mode: input.mode,
    definitionVersion: input.definitionVersion,
    draftDefinition: input.draftDefinition,
    body,
    payload,
    input: runInput,
    session: input.session,
    enrollmentPolicy,
    enrollmentSubject: enrollmentPolicy === 'ONE_TIME' ? await enrollmentSubjectOf(trigger, payload, runInput) : null,
    onErrorPolicy,
    callback: {
      url: requestUrl ?? trigger?.callback?.url ?? project.defaultCallbackUrl,
      secret: requestSecret ?? trigger?.callback?.secret ?? project.defaultCallbackSecret,
    },
    retry: trigger?.retry ? { ...trigger.retry } : { ...DEFAULT_RETRY },
    triggerKey: trigger?.key ?? 'external_event',
  };
}

/**
 * The spec's trigger checks for flow and automation runs: external trigger enabled, a sent
 * triggerKey equal to the node's key, every expected top-level key present.
 */
export function checkTrigger(plan: RunPlan, compiled: CompiledDefinition): TriggerValidation {
  const trigger = compiled.graphs[plan.graph]?.trigger;
  const expectedKeys = [...(trigger?.expectedKeys ?? [])];
  const actualKeys = Object.keys(plan.payload);
  const missingKeys = expectedKeys.filter((key) => !Object.hasOwn(plan.payload, key));
  const errors: string[] = [];
  if (trigger && !trigger.externalEnabled) errors.push('External trigger is not enabled on the Trigger node');
  const sentKey = plan.body.triggerKey;
  if (typeof sentKey === 'string' && sentKey !== plan.triggerKey) {
    errors.push(`triggerKey "${sentKey}" does not match the Trigger node's key "${plan.triggerKey}"`);
  }
  if (missingKeys.length > 0) errors.push(`Payload is missing required keys: ${missingKeys.join(', ')}`);
  return { valid: errors.length === 0, expectedKeys, actualKeys, missingKeys, errors };
}

/** The plan of a request that will not run (no definition): recorded with the project's defaults. */
export function fallbackPlan(
  target: TargetType,
  mode: RunModeName,
  body: Record<string, unknown>,
  project: ProjectDefaults & { publishedVersion: number },
  session: BotSessionRef | null,
): RunPlan {
  return {
    target,
    graph: GRAPH_OF_TARGET[target],
    mode,
    definitionVersion: project.publishedVersion,
    draftDefinition: null,
    body,
    payload: {},
    input: {},
    session,
    enrollmentPolicy: target === 'BOT' ? null : project.defaultEnrollmentPolicy,
    enrollmentSubject: null,
    onErrorPolicy: project.defaultOnErrorPolicy,
    callback: { url: null, secret: null },
    retry: { maxAttempts: 1, backoffSeconds: 0 },
    triggerKey: 'external_event',
  };
}

/** What the run's first event records of the request that started it. */
export function requestInfo(
  request: Pick<StartInvocationRequest, 'triggerSource' | 'tokenId'>,
  plan: RunPlan,
  project: { publishedVersion: number },
  draft: boolean,
  scheduled: boolean,
  fire: ScheduleFireInfo | null,
): RequestInfo {
  return {
    targetType: plan.target,
    mode: plan.mode,
    // Polled items and dead-letter replays say where they came from; API calls leave it empty.
    triggerSource: request.triggerSource === 'POLLING' || request.triggerSource === 'REPLAY' ? request.triggerSource : scheduled || fire !== null ? 'SCHEDULE' : 'WEBHOOK',
    environment: draft ? 'TEST' : 'PRODUCTION',
    requestPayload: redactSecrets(plan.body) as Record<string, JsonValue>,
    enrollmentPolicy: plan.enrollmentPolicy,
    onErrorPolicy: plan.onErrorPolicy,
    startedByTokenId: request.tokenId || null,
    definitionVersion: draft ? 0 : project.publishedVersion,
    sessionId: plan.session?.id ?? null,
    maxAttempts: retriesAutomatically(plan) ? plan.retry.maxAttempts : 1,
    ...(fire === null ? {} : { schedule: fire }),
  };
}

/** Flow: the body's top-level fields less the control fields. Automation: the body's `payload`. */
function payloadOf(target: TargetType, body: Record<string, unknown>): Record<string, unknown> {
  if (target === 'AUTOMATION') {
    const payload = body.payload;
    return payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? { ...(payload as Record<string, unknown>) } : {};
  }
  if (target === 'BOT') return {};
  const payload: Record<string, unknown> = { ...body };
  for (const field of CONTROL_FIELDS) delete payload[field];
  return payload;
}

function inputOf(target: TargetType, body: Record<string, unknown>, session: BotSessionRef | null): Record<string, unknown> {
  if (target === 'BOT') {
    return {
      message: typeof body.message === 'string' ? body.message : '',
      sessionId: session?.id ?? null,
      userId: session?.userId ?? null,
      userName: session?.userName ?? null,
      platform: session?.platform ?? null,
    };
  }
  return body.event === undefined ? {} : { event: body.event };
}

async function enrollmentSubjectOf(
  trigger: CompiledTrigger | undefined,
  payload: Record<string, unknown>,
  input: Record<string, unknown>,
): Promise<string | null> {
  let subject: unknown = payload.customerId;
  if (trigger?.enrollmentKeyExpression) {
    try {
      subject = await evaluate(trigger.enrollmentKeyExpression, { payload, input, vars: {}, session: null });
    } catch {
      // An enrollment key that cannot be evaluated enrolls nobody; the run itself still runs.
      subject = undefined;
    }
  }
  return typeof subject === 'string' && subject !== '' ? subject : typeof subject === 'number' ? String(subject) : null;
}

function policy<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}
