/** The parts of a run the run page reads, as the read model records them. */
export interface StepView {
  nodeId: string;
  type: string;
  status: string;
  startedAt?: string;
  completedAt?: string;
  durationMs?: number;
  error?: string;
  approval?: { decision: string; decidedBy: string | null; decidedAt: string; comment: string | null };
}

export interface CallbackAttemptView {
  webhookId: string;
  attempt: number;
  attemptedAt: string;
  durationMs: number;
  outcome: string;
  statusCode: number | null;
  error: string | null;
  final?: boolean;
}

export interface PendingApprovalView {
  nodeId: string;
  title: string;
  requestedAt: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export function stepsOf(value: unknown): StepView[] {
  return Array.isArray(value) ? (value.filter((step) => isObject(step) && typeof step.nodeId === 'string') as unknown as StepView[]) : [];
}

export function attemptsOf(value: unknown): CallbackAttemptView[] {
  return Array.isArray(value) ? (value.filter((item) => isObject(item) && typeof item.attempt === 'number') as unknown as CallbackAttemptView[]) : [];
}

export function pendingApprovalOf(value: unknown): PendingApprovalView | null {
  return isObject(value) && typeof value.nodeId === 'string' ? (value as unknown as PendingApprovalView) : null;
}
