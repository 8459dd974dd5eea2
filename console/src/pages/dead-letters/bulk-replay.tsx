import { useState } from 'react';
import type { Schema } from '@runline/api-client';
import type { ApiError } from '../../api/api-error.js';
import { useApiCall } from '../../api/use-api.js';
import { ErrorBanner } from '../../components/error-banner.js';

type Filter = { source?: string; targetType?: string };

/**
 * Bulk replay in two steps: a dry run counts the unreplayed events the filter matches, then
 * the user replays exactly that filter and sees the outcome (matched, succeeded, failed).
 */
export function BulkReplay({ orgId, projectId, source, onReplayed }: { orgId: string; projectId: string; source: string; onReplayed: () => void }) {
  const call = useApiCall();
  const [targetType, setTargetType] = useState('');
  const [counted, setCounted] = useState<{ filter: Filter; matched: number }>();
  const [outcome, setOutcome] = useState<Schema<'BulkReplay'>>();
  const [error, setError] = useState<{ action: string; error: ApiError }>();
  const [busy, setBusy] = useState(false);
  const filter: Filter = { ...(source ? { source } : {}), ...(targetType ? { targetType } : {}) };
  const filterWords = [source ? `source “${source}”` : 'every source', targetType ? `type ${targetType}` : 'every type'].join(', ');
  const stale = counted && JSON.stringify(counted.filter) !== JSON.stringify(filter);

  async function run(dryRun: boolean, chosen: Filter) {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await call((client) => client.POST('/v1/orgs/{orgId}/projects/{projectId}/dead-letters/replay', { params: { path: { orgId, projectId } }, body: { filter: chosen, dryRun } }));
      if (dryRun) {
        setCounted({ filter: chosen, matched: answer.matched });
        setOutcome(undefined);
      } else {
        setCounted(undefined);
        setOutcome(answer);
        onReplayed();
      }
    } catch (caught) {
      setError({ action: dryRun ? 'Counting' : 'Replaying', error: caught as ApiError });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="bulk-title">
      <h2 id="bulk-title">Bulk replay</h2>
      <p className="field-help">
        Replays every event not yet replayed that matches: {filterWords}. Each event is replayed at most once. Count them first; fix the definition before you replay, or they fail again.
      </p>
      <div className="actions">
        <label>
          Type
          <select value={targetType} onChange={(event) => setTargetType(event.target.value)}>
            <option value="">every type</option>
            <option value="FLOW">FLOW (runs that failed all retries)</option>
            <option value="polling">polling (failed polled items)</option>
          </select>
        </label>
        <button type="button" className="button" disabled={busy} onClick={() => void run(true, filter)}>
          Count matching events
        </button>
      </div>
      {counted && !stale && (
        <div className="outcome" role="status">
          <p>
            <strong>{counted.matched}</strong> {counted.matched === 1 ? 'event matches' : 'events match'} ({filterWords}).
          </p>
          {counted.matched > 0 && (
            <button type="button" className="button button-primary" disabled={busy} onClick={() => void run(false, counted.filter)}>
              Replay {counted.matched} {counted.matched === 1 ? 'event' : 'events'}
            </button>
          )}
        </div>
      )}
      {stale && <p className="muted">The filter changed: count again before replaying.</p>}
      {outcome && (
        <dl className="figures figures-small outcome-figures" aria-label="Outcome of the bulk replay" role="status">
          <div>
            <dt>Matched</dt>
            <dd>{outcome.matched}</dd>
          </div>
          <div>
            <dt>✓ Succeeded</dt>
            <dd>{outcome.succeeded ?? 0}</dd>
          </div>
          <div className={outcome.failed ? 'figure-bad' : undefined}>
            <dt>✕ Failed</dt>
            <dd>{outcome.failed ?? 0}</dd>
          </div>
          {outcome.pending ? (
            <div>
              <dt>Still running</dt>
              <dd>{outcome.pending}</dd>
            </div>
          ) : null}
          {outcome.remaining ? (
            <div>
              <dt>Left for another round</dt>
              <dd>{outcome.remaining}</dd>
            </div>
          ) : null}
        </dl>
      )}
      <ErrorBanner error={error?.error} action={error?.action} />
    </section>
  );
}
