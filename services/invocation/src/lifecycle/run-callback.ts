/**
 * The one answer to "does this run call back, to where, with what secret", and the
 * DeliverCallback command that asks the callback service for it. The command goes through the
 * outbox in the transaction that records the run's final event, so it is never lost and never
 * sent for a run that did not end.
 *
 * Which runs call back: async runs (bot invoke, flow and automation trigger-async, scheduled
 * ones included) with a callback URL, when they end SUCCEEDED, FAILED or TIMEOUT (once: a
 * retried automation calls back after its last attempt). A run cancelled by its client does not
 * (the PATCH answers with the run), nor does an async request refused by the trigger checks
 * (the 500 answer is the outcome; nothing was queued).
 */
import type { BusMessage } from '@runline/bus';
import { create, DeliverCallbackSchema, EVENT_TYPES, newEnvelope, toBusMessage } from '@runline/contracts';
import type { JsonValue } from '@runline/engine';
import type { SecretBox } from '@runline/runtime';
import type { InvocationDocument } from './invocation.projector.js';
import type { RunPlan } from './run-plan.js';

/** Where a run calls back; the secret sealed with SECRETS_KEY for the trip and the callback service's table. */
export interface CallbackTarget {
  url: string;
  sealedSecret: string | null;
}

const CALLING_BACK: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT']);

/** Where a run that ends `status` calls back; undefined when it does not (not async, no URL, or not an ending that calls back). */
export function callbackOnEnd(plan: Pick<RunPlan, 'mode' | 'callback'>, status: string, secrets: SecretBox): CallbackTarget | undefined {
  if (!CALLING_BACK.has(status) || plan.mode !== 'ASYNC' || !plan.callback.url) return undefined;
  return { url: plan.callback.url, sealedSecret: plan.callback.secret ? secrets.seal(plan.callback.secret) : null };
}

/**
 * The body: `{invocationId, status, result}` on success, `{invocationId, status, error}` on
 * FAILED or TIMEOUT, then `trace`; the run's values as GET shows them (secrets redacted).
 */
export function callbackBody(document: InvocationDocument): Record<string, JsonValue> {
  const body: Record<string, JsonValue> = { invocationId: document.invocationId, status: document.status };
  if (document.status === 'SUCCEEDED') body.result = document.result;
  else body.error = document.errorMessage ?? 'Run failed';
  body.trace = document.trace;
  return body;
}

/** The DeliverCallback for a run that has just reached `document.status`, or null when that status does not call back. */
export function deliverCallbackMessage(
  document: InvocationDocument,
  owner: { orgId: string; projectId: string },
  target: CallbackTarget,
): BusMessage | null {
  if (!CALLING_BACK.has(document.status)) return null;
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.DELIVER_CALLBACK,
      payload: create(DeliverCallbackSchema, {
        invocationId: document.invocationId,
        url: target.url,
        sealedSecret: target.sealedSecret ?? '',
        body: new TextEncoder().encode(JSON.stringify(callbackBody(document))),
        runStatus: document.status,
      }),
      orgId: owner.orgId,
      projectId: owner.projectId,
      invocationId: document.invocationId,
    }),
  );
}
