import { useState } from 'react';
import type { ApiError } from '../../api/api-error.js';
import { useApiCall } from '../../api/use-api.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Time } from '../../components/time-display.js';
import { fromLocalInput, toLocalInput } from '../logs/log-filters.js';
import type { PendingApprovalView } from './run-types.js';

type Action = 'approve' | 'reject' | 'cancel' | 'reschedule';

function useRunChange(orgId: string, invocationId: string, onDone: () => void) {
  const call = useApiCall();
  const [busy, setBusy] = useState<Action | null>(null);
  const [failure, setFailure] = useState<{ action: Action; error: ApiError } | null>(null);
  async function change(action: Action, extra: Record<string, unknown> = {}) {
    setBusy(action);
    setFailure(null);
    const body: { action: Action } = { action, ...extra };
    try {
      await call((client) => client.PATCH('/v1/orgs/{orgId}/external-invocations/{invocationId}', { params: { path: { orgId, invocationId } }, body }));
      onDone();
    } catch (error) {
      setFailure({ action, error: error as ApiError });
    } finally {
      setBusy(null);
    }
  }
  return { busy, failure, change };
}

const ACTION_WORDS: Record<Action, string> = { approve: 'Approving', reject: 'Rejecting', cancel: 'Cancelling', reschedule: 'Rescheduling' };

/** Approve or reject the approval the run waits at, with an optional comment (kept on an error). */
export function ApprovalActions({ orgId, invocationId, pending, onDone }: { orgId: string; invocationId: string; pending: PendingApprovalView; onDone(): void }) {
  const { busy, failure, change } = useRunChange(orgId, invocationId, onDone);
  const [comment, setComment] = useState('');
  const extra = comment.trim() ? { comment: comment.trim() } : {};
  return (
    <section className="card action-card" aria-labelledby="approval-heading">
      <h2 id="approval-heading">Waiting for approval</h2>
      <p>
        <strong>{pending.title}</strong> (step <span className="mono">{pending.nodeId}</span>, asked <Time value={pending.requestedAt} />)
      </p>
      <label htmlFor="approval-comment">Comment (optional)</label>
      <textarea id="approval-comment" rows={2} maxLength={2000} value={comment} onChange={(event) => setComment(event.target.value)} />
      <ErrorBanner error={failure?.error} action={failure ? ACTION_WORDS[failure.action] : undefined} />
      <div className="actions">
        <button type="button" className="button button-primary" disabled={busy !== null} onClick={() => void change('approve', extra)}>
          {busy === 'approve' ? 'Approving…' : 'Approve'}
        </button>
        <button type="button" className="button button-danger" disabled={busy !== null} onClick={() => void change('reject', extra)}>
          {busy === 'reject' ? 'Rejecting…' : 'Reject'}
        </button>
      </div>
    </section>
  );
}

/** Cancel a scheduled run (after a confirmation), or move it to another time. */
export function ScheduleActions({ orgId, invocationId, scheduledFor, onDone }: { orgId: string; invocationId: string; scheduledFor: string | null | undefined; onDone(): void }) {
  const { busy, failure, change } = useRunChange(orgId, invocationId, onDone);
  const [runAt, setRunAt] = useState(toLocalInput(scheduledFor ?? ''));
  const [confirming, setConfirming] = useState(false);
  return (
    <section className="card action-card" aria-labelledby="schedule-heading">
      <h2 id="schedule-heading">Scheduled</h2>
      <p>
        Due <Time value={scheduledFor} />.
      </p>
      <div className="actions">
        <label>
          <span>New time</span>
          <input type="datetime-local" value={runAt} onChange={(event) => setRunAt(event.target.value)} />
        </label>
        <button type="button" className="button" disabled={busy !== null || !runAt} onClick={() => void change('reschedule', { runAt: fromLocalInput(runAt) })}>
          {busy === 'reschedule' ? 'Rescheduling…' : 'Reschedule'}
        </button>
        {confirming ? (
          <>
            <button type="button" className="button button-danger" disabled={busy !== null} onClick={() => void change('cancel')}>
              {busy === 'cancel' ? 'Cancelling…' : 'Yes, cancel this run'}
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" className="button button-danger" disabled={busy !== null} onClick={() => setConfirming(true)}>
            Cancel run
          </button>
        )}
      </div>
      <ErrorBanner error={failure?.error} action={failure ? ACTION_WORDS[failure.action] : undefined} />
    </section>
  );
}
