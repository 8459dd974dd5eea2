import { useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import type { Schema } from '@runline/api-client';
import type { ApiError } from '../api/api-error.js';
import { useApiCall, useResource } from '../api/use-api.js';
import { DataTable, EmptyState } from '../components/data-table.js';
import { ErrorBanner } from '../components/error-banner.js';
import { JsonView } from '../components/json-view.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { Time } from '../components/time-display.js';
import { BulkReplay } from './dead-letters/bulk-replay.js';
import '../components/config-pages.css';

const PAGE_SIZE = 50;
type Letter = Schema<'DeadLetterEvent'>;

function ReplayState({ letter }: { letter: Letter }) {
  if (!letter.replayedAt) return <span className="badge badge-warn"><span aria-hidden="true">!</span> unresolved</span>;
  const ok = letter.replayStatus === 'SUCCESS';
  return (
    <span>
      <span className={`badge ${ok ? 'badge-good' : 'badge-bad'}`}>
        <span aria-hidden="true">{ok ? '✓' : '✕'}</span> replayed{letter.replayStatus ? `: ${letter.replayStatus.toLowerCase()}` : ''}
      </span>
      <div className="muted">
        <Time value={letter.replayedAt} />
      </div>
    </span>
  );
}

/** Dead letters of the project: filter by source and unresolved-only (in the URL), replay one, bulk replay. */
export function DeadLettersPage() {
  const { orgId = '', projectId = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const source = search.get('source') ?? '';
  const unresolvedOnly = search.get('unresolved') === '1';
  const offset = Math.max(0, Number(search.get('offset') ?? 0) || 0);
  const [sourceText, setSourceText] = useState(source);
  const letters = useResource(
    (client) =>
      client.GET('/v1/orgs/{orgId}/projects/{projectId}/dead-letters', {
        params: { path: { orgId, projectId }, query: { ...(source ? { source } : {}), unresolvedOnly: unresolvedOnly ? 'true' : 'false', limit: PAGE_SIZE, offset } },
      }),
    [orgId, projectId, source, unresolvedOnly, offset],
  );
  const call = useApiCall();
  const [replaying, setReplaying] = useState<string>();
  const [replayed, setReplayed] = useState<string>();
  const [replayError, setReplayError] = useState<{ id: string; error: ApiError }>();

  const setFilter = (changes: Record<string, string | null>) =>
    setSearch((previous) => {
      const next = new URLSearchParams(previous);
      for (const [key, value] of Object.entries(changes)) {
        if (value === null || value === '') next.delete(key);
        else next.set(key, value);
      }
      if (!('offset' in changes)) next.delete('offset');
      return next;
    });

  async function replay(id: string) {
    setReplaying(id);
    setReplayError(undefined);
    setReplayed(undefined);
    try {
      await call((client) => client.POST('/v1/orgs/{orgId}/projects/{projectId}/dead-letters/{id}/replay', { params: { path: { orgId, projectId, id } } }));
      setReplayed(id);
      letters.reload();
    } catch (caught) {
      setReplayError({ id, error: caught as ApiError });
      letters.reload();
    } finally {
      setReplaying(undefined);
    }
  }

  const page = letters.data;
  const rows = page?.data ?? [];
  const filtered = Boolean(source) || unresolvedOnly;
  return (
    <>
      <PageHeading title="Dead letters" />
      <p className="muted">
        Events Runline could not run: automation runs that failed all their retries (FLOW), polled items that failed (polling), and hook deliveries the trigger refused. Fix the cause (usually
        the definition), publish, then replay them here.
      </p>
      <form
        className="filters"
        role="search"
        aria-label="Filter dead letters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter({ source: sourceText.trim() });
        }}
      >
        <div className="filter-fields">
          <label>
            Source
            <span className="search-row">
              <input value={sourceText} onChange={(event) => setSourceText(event.target.value)} placeholder="hook name, provider or poll source" />
              <button type="submit" className="button button-small">
                Apply
              </button>
            </span>
          </label>
          <label className="check">
            <input type="checkbox" checked={unresolvedOnly} onChange={(event) => setFilter({ unresolved: event.target.checked ? '1' : null })} />
            Unresolved only (not yet replayed)
          </label>
        </div>
        {filtered && (
          <p className="current-filter">
            <span>
              Showing {source ? `source “${source}”` : 'every source'}
              {unresolvedOnly ? ', unresolved only' : ''}.
            </span>
            <button
              type="button"
              className="button button-small"
              onClick={() => {
                setSourceText('');
                setFilter({ source: null, unresolved: null });
              }}
            >
              Clear the filter
            </button>
          </p>
        )}
      </form>

      <BulkReplay orgId={orgId} projectId={projectId} source={source} onReplayed={letters.reload} />

      <h2>Events{page ? ` (${page.total})` : ''}</h2>
      <ErrorBanner error={letters.error} action="Loading the dead letters" />
      {letters.loading && !page && <Loading what="dead letters" />}
      {replayed && (
        <p className="outcome" role="status">
          ✓ Replayed: a new run started from the event. Its outcome shows in the logs.
        </p>
      )}
      {page && (
        <DataTable
          rows={rows}
          rowKey={(letter) => letter.id}
          rowData={(letter) => ({ 'data-dead-letter': letter.id })}
          caption="Dead-letter events"
          narrow="labelled-cards"
          empty={
            <EmptyState title={filtered ? 'No dead letters match this filter.' : 'No dead letters: every event ran.'}>
              {filtered
                ? 'Clear the filter to see them all.'
                : 'When a run fails all its retries, or a polled item or hook delivery cannot start a run, it lands here to be replayed once the cause is fixed.'}
            </EmptyState>
          }
          columns={[
            { header: 'State', cell: (letter) => <ReplayState letter={letter} /> },
            {
              header: 'Source',
              className: 'cell-wrap',
              cell: (letter) => (
                <>
                  {letter.source} <span className="tag">{letter.targetType}</span>
                  {letter.triggerKey && <div className="muted">trigger {letter.triggerKey}</div>}
                </>
              ),
            },
            {
              header: 'Failure',
              className: 'error-cell',
              cell: (letter) => (
                <>
                  {letter.failureReason ?? '—'}
                  {letter.attemptCount ? <div className="muted">after {letter.attemptCount} {letter.attemptCount === 1 ? 'attempt' : 'attempts'}</div> : null}
                  <details>
                    <summary>Payload</summary>
                    <JsonView label="Payload" value={letter.requestPayload} />
                  </details>
                </>
              ),
            },
            { header: 'Created', cell: (letter) => <Time value={letter.createdAt} /> },
            {
              header: 'Actions',
              hideHeader: true,
              cell: (letter) => (
                <>
                  {!letter.replayedAt && (
                    <button type="button" className="button button-small" disabled={replaying === letter.id} onClick={() => void replay(letter.id)} aria-label={`Replay the event from ${letter.source}`}>
                      {replaying === letter.id ? 'Replaying…' : 'Replay'}
                    </button>
                  )}
                  {replayError?.id === letter.id && <ErrorBanner error={replayError.error} action="Replaying" />}
                </>
              ),
            },
          ]}
        />
      )}
      {page && page.total > PAGE_SIZE && (
        <nav className="pager" aria-label="Pages of dead letters">
          <span className="muted">
            {offset + 1}–{Math.min(page.total, offset + rows.length)} of {page.total}
          </span>
          <button type="button" className="button button-small" disabled={offset === 0} onClick={() => setFilter({ offset: String(Math.max(0, offset - PAGE_SIZE)) || null })}>
            Newer
          </button>
          <button type="button" className="button button-small" disabled={offset + PAGE_SIZE >= page.total} onClick={() => setFilter({ offset: String(offset + PAGE_SIZE) })}>
            Older
          </button>
        </nav>
      )}
    </>
  );
}
