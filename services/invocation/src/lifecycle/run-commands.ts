import { create, EVENT_TYPES, newEnvelope, RunInvocationSchema, toBusMessage } from '@runline/contracts';
import type { BusMessage } from '@runline/bus';

/** The work-queue command that starts a QUEUED run. */
export function runInvocationCommand(invocation: { id: string; orgId: string; projectId: string }): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.RUN_INVOCATION,
      payload: create(RunInvocationSchema, { invocationId: invocation.id }),
      orgId: invocation.orgId,
      projectId: invocation.projectId,
      invocationId: invocation.id,
    }),
  );
}
