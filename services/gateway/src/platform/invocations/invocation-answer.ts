/** The fields of the spec's Invocation table, in its order. */
export const INVOCATION_FIELD_ORDER = [
  'invocationId',
  'status',
  'environment',
  'triggerSource',
  'mode',
  'targetType',
  'startedAt',
  'completedAt',
  'durationMs',
  'errorMessage',
  'requestPayload',
  'result',
  'trace',
  'steps',
  'callbackAttempts',
  'scheduledFor',
  'schedulerStatus',
  'schedulerJobName',
  'pendingApproval',
  'createdAt',
  'updatedAt',
] as const;

/**
 * An invocation as GET and PATCH answer it: the spec's fields in the spec's order, then the
 * fields we add, in the order the read model holds them (PostgreSQL's jsonb keeps its own key
 * order, which reads as noise to a person).
 */
export function invocationAnswer(document: Record<string, unknown>): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const field of INVOCATION_FIELD_ORDER) if (Object.hasOwn(document, field)) answer[field] = document[field];
  for (const [field, value] of Object.entries(document)) if (!Object.hasOwn(answer, field)) answer[field] = value;
  return answer;
}

export const INVOCATION_ACTIONS = ['cancel', 'reschedule', 'approve', 'reject'] as const;
export type InvocationAction = (typeof INVOCATION_ACTIONS)[number];

/** What PATCH asks: the action and whatever other fields the body holds. */
export interface InvocationChange {
  action: InvocationAction;
  [field: string]: unknown;
}
