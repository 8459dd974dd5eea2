import { useId, useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/api-error.js';
import { backfillSchedule } from '../../api/schedules-api.js';
import { useApiCall } from '../../api/use-api.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { localInputToIso } from './schedule-words.js';

/**
 * Runs a schedule once per fire time of a past range, in a fold of the schedule's row: from and
 * to in the viewer's time, [from, to), at most 1,000 fires (the API refuses more, and says so).
 * What was typed stays after a refusal.
 */
export function BackfillForm({ orgId, projectId, scheduleId }: { orgId: string; projectId: string; scheduleId: string }) {
  const call = useApiCall();
  const ids = useId();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | string>();
  const [started, setStarted] = useState<number>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const range = { from: localInputToIso(from), to: localInputToIso(to) };
    if (range.from === undefined || range.to === undefined) {
      setError('Give both times.');
      return;
    }
    setBusy(true);
    setError(undefined);
    setStarted(undefined);
    try {
      const answer = await call(backfillSchedule(orgId, projectId, scheduleId, { from: range.from, to: range.to }));
      setStarted(answer.count);
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <details className="backfill">
      <summary>Backfill…</summary>
      <form onSubmit={(event) => void submit(event)} aria-label={`Backfill ${scheduleId}`}>
        <p className="field-help">One run per fire time from “From” up to, not including, “To” (your time), oldest first; at most 1,000.</p>
        <div className="form-grid">
          <label htmlFor={`${ids}-from`}>
            From
            <input id={`${ids}-from`} type="datetime-local" step="1" value={from} onChange={(event) => setFrom(event.target.value)} required />
          </label>
          <label htmlFor={`${ids}-to`}>
            To
            <input id={`${ids}-to`} type="datetime-local" step="1" value={to} onChange={(event) => setTo(event.target.value)} required />
          </label>
        </div>
        <ErrorBanner error={error} action="The backfill" />
        {started !== undefined && (
          <p className="outcome" role="status">
            {started === 1 ? '1 run started.' : `${started} runs started.`}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="button button-small" disabled={busy}>
            {busy ? 'Starting…' : 'Run the backfill'}
          </button>
        </div>
      </form>
    </details>
  );
}
