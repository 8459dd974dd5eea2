import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import type { Schema } from '@runline/api-client';
import type { ApiError } from '../api/api-error.js';
import { useApiCall, useResource } from '../api/use-api.js';
import { useRowAction } from '../api/use-row-action.js';
import { ConfirmAction } from '../components/confirm-action.js';
import { DataTable, EmptyState } from '../components/data-table.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { formatDuration, Time } from '../components/time-display.js';
import '../components/config-pages.css';

type Trigger = Schema<'PollingTrigger'>;
/** The list shows when polls happen; it reloads this often while the tab is visible. */
const TRIGGERS_POLL_MS = 15_000;

interface Draft {
  source: string;
  pollKey: string;
  pollEndpoint: string;
  dedupeField: string;
  authHeader: string;
  intervalSeconds: string;
}
const EMPTY: Draft = { source: '', pollKey: '', pollEndpoint: '', dedupeField: 'id', authHeader: '', intervalSeconds: '60' };
const draftOf = (trigger: Trigger): Draft => ({
  source: trigger.source,
  pollKey: trigger.pollKey,
  pollEndpoint: trigger.pollEndpoint,
  dedupeField: trigger.dedupeField ?? 'id',
  authHeader: trigger.authHeader ?? '',
  intervalSeconds: String(trigger.intervalMs / 1000),
});

function TriggerForm({ orgId, projectId, draft, setDraft, editing, onSaved }: { orgId: string; projectId: string; draft: Draft; setDraft: (draft: Draft) => void; editing: boolean; onSaved: () => void }) {
  const call = useApiCall();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const field = (key: keyof Draft) => ({ value: draft[key], onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [key]: event.target.value }) });

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const seconds = draft.intervalSeconds.trim();
      await call((client) =>
        client.POST('/v1/orgs/{orgId}/projects/{projectId}/polling-triggers', {
          params: { path: { orgId, projectId } },
          body: {
            source: draft.source.trim(),
            pollKey: draft.pollKey.trim(),
            pollEndpoint: draft.pollEndpoint.trim(),
            dedupeField: draft.dedupeField.trim() || null,
            authHeader: draft.authHeader === '' ? null : draft.authHeader,
            intervalMs: seconds === '' ? null : Math.round(Number(seconds) * 1000),
          },
        }),
      );
      setDraft(EMPTY);
      onSaved();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="trigger-form-title">
      <h2 id="trigger-form-title">{editing ? `Update “${draft.pollKey}”` : 'Register a polling trigger'}</h2>
      <p className="field-help">Runline calls the endpoint with GET every interval; each new item (by its dedupe field) starts one run with the item as its payload. The same source and key update an existing trigger.</p>
      <div className="form-grid">
        <label>
          Source
          <input {...field('source')} required readOnly={editing} placeholder="e.g. crm" />
        </label>
        <label>
          Poll key
          <input {...field('pollKey')} required readOnly={editing} placeholder="e.g. new-orders" />
        </label>
        <label className="wide">
          Endpoint URL (called with GET)
          <input type="url" {...field('pollEndpoint')} required placeholder="https://api.example.com/orders?status=new" />
        </label>
        <label>
          Dedupe field
          <input {...field('dedupeField')} placeholder="id" />
          <span className="field-help">The item field that tells items apart.</span>
        </label>
        <label>
          Interval (seconds)
          <input inputMode="decimal" {...field('intervalSeconds')} />
        </label>
        <label className="wide">
          Authorization header (optional)
          <input type="password" autoComplete="off" {...field('authHeader')} placeholder="Bearer …" />
          <span className="field-help">Sent as the Authorization header of each poll.</span>
        </label>
      </div>
      <ErrorBanner error={error} action="Saving the trigger" />
      <div className="actions">
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Saving…' : editing ? 'Update trigger' : 'Register trigger'}
        </button>
        {editing && (
          <button type="button" className="button" onClick={() => setDraft(EMPTY)}>
            Cancel the update
          </button>
        )}
      </div>
    </form>
  );
}

/** The project's polling triggers: register or update, delete; last poll, next poll, last seen value. */
export function PollingTriggersPage() {
  const { orgId = '', projectId = '' } = useParams();
  const triggers = useResource(
    (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/polling-triggers', { params: { path: { orgId, projectId } } }),
    [orgId, projectId],
    { pollMs: TRIGGERS_POLL_MS },
  );
  const call = useApiCall();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const rows = triggers.data?.data ?? [];
  const editing = rows.some((row) => row.pollKey === draft.pollKey && row.source === draft.source);

  const remove = useRowAction(async (pollKey) => {
    await call((client) => client.DELETE('/v1/orgs/{orgId}/projects/{projectId}/polling-triggers/{pollKey}', { params: { path: { orgId, projectId, pollKey } } }));
    triggers.reload();
  });

  return (
    <>
      <PageHeading title="Polling triggers" />
      <TriggerForm orgId={orgId} projectId={projectId} draft={draft} setDraft={setDraft} editing={editing} onSaved={triggers.reload} />
      <h2>Triggers</h2>
      <ErrorBanner error={triggers.error} action="Loading the triggers" />
      {triggers.loading && !triggers.data && <Loading what="polling triggers" />}
      {triggers.data && (
        <DataTable
          rows={rows}
          rowKey={(trigger) => trigger.id}
          caption="Polling triggers"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No polling triggers.">
              Register one above when a system you use cannot call a webhook: Runline asks its API for new items instead, and each new item starts a run.
            </EmptyState>
          }
          columns={[
            {
              header: 'Source and key',
              className: 'cell-wrap',
              cell: (trigger) => (
                <>
                  {trigger.source} / <strong>{trigger.pollKey}</strong>
                </>
              ),
            },
            {
              header: 'Endpoint',
              className: 'cell-wrap mono',
              cell: (trigger) => (
                <>
                  {trigger.pollEndpoint}
                  <div className="muted">
                    dedupe by {trigger.dedupeField ?? 'id'}
                    {trigger.authHeader ? ', with an Authorization header' : ''}
                  </div>
                </>
              ),
            },
            { header: 'Every', cell: (trigger) => formatDuration(trigger.intervalMs) },
            { header: 'Last poll', cell: (trigger) => <Time value={trigger.lastPolledAt} empty="not yet" /> },
            { header: 'Next poll', cell: (trigger) => <Time value={trigger.nextPollAt} /> },
            { header: 'Last seen value', className: 'cell-wrap mono', cell: (trigger) => trigger.lastSeenValue ?? <span className="muted">none yet</span> },
            {
              header: 'Actions',
              hideHeader: true,
              className: 'row-links',
              cell: (trigger) => (
                <>
                  <button type="button" className="button button-small" onClick={() => setDraft(draftOf(trigger))} aria-label={`Edit ${trigger.pollKey}`}>
                    Edit
                  </button>{' '}
                  <ConfirmAction
                    label="Delete"
                    question={`Delete the trigger “${trigger.pollKey}”? Its polls stop.`}
                    confirmLabel="Yes, delete it"
                    busy={remove.isBusy(trigger.pollKey)}
                    onConfirm={() => remove.run(trigger.pollKey)}
                  />
                  <ErrorBanner error={remove.errorFor(trigger.pollKey)} action="Deleting" />
                </>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
