import { useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/api-error.js';
import { useApiCall, useResource } from '../../api/use-api.js';
import { useRowAction } from '../../api/use-row-action.js';
import { ConfirmAction } from '../../components/confirm-action.js';
import { CopyButton } from '../../components/copy-button.js';
import { DataTable, EmptyState } from '../../components/data-table.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Loading } from '../../components/loading.js';
import { ShownOnce } from '../../components/shown-once.js';
import { Time } from '../../components/time-display.js';

/** Active or revoked: a word and an icon, colour only adds to them. */
export function StateBadge({ status }: { status: string }) {
  const tone = status === 'ACTIVE' ? ['good', '✓'] : status === 'FAILED' ? ['bad', '✕'] : status === 'PENDING' ? ['info', '…'] : ['muted', '⊘'];
  return (
    <span className={`badge badge-${tone[0]}`}>
      <span aria-hidden="true">{tone[1]}</span> {status}
    </span>
  );
}

/** Inbound hooks: create (the secret shown once), list with URL and status, revoke. */
export function InboundHooks({ orgId, projectId }: { orgId: string; projectId: string }) {
  const hooks = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/webhooks', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const call = useApiCall();
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const [created, setCreated] = useState<{ name: string; url: string; secret: string }>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const hook = await call((client) =>
        client.POST('/v1/orgs/{orgId}/projects/{projectId}/webhooks', { params: { path: { orgId, projectId } }, body: { name: name.trim(), ...(secret ? { secret } : {}) } }),
      );
      setCreated({ name: hook.name, url: hook.url, secret: hook.secret });
      setName('');
      setSecret('');
      hooks.reload();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  const revoke = useRowAction(async (id) => {
    await call((client) => client.DELETE('/v1/orgs/{orgId}/projects/{projectId}/webhooks/{hookId}', { params: { path: { orgId, projectId, hookId: id } } }));
    hooks.reload();
  });

  const rows = hooks.data?.data ?? [];
  return (
    <section aria-labelledby="hooks-title">
      <h2 id="hooks-title">Inbound hooks</h2>
      <p className="muted">
        A hook is a URL another system POSTs JSON to; each signed delivery starts a run of this project. Sign the raw body with the hook’s secret: <code>X-Runline-Signature: sha256=&lt;HMAC-SHA256 hex&gt;</code>.
      </p>
      {created && (
        <ShownOnce title={`Secret of the hook “${created.name}”`} value={created.secret} what="secret" onDone={() => setCreated(undefined)} />
      )}
      <form className="card" onSubmit={(event) => void create(event)} aria-labelledby="new-hook-title">
        <h3 id="new-hook-title">Create a hook</h3>
        <div className="form-grid">
          <label>
            Name
            <input value={name} onChange={(event) => setName(event.target.value)} required placeholder="e.g. orders" />
            <span className="field-help">Also the source of its dead letters.</span>
          </label>
          <label>
            Secret (optional)
            <input type="password" autoComplete="new-password" value={secret} onChange={(event) => setSecret(event.target.value)} />
            <span className="field-help">Leave empty and Runline makes a strong one.</span>
          </label>
        </div>
        <ErrorBanner error={error} action="Creating the hook" />
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create hook'}
          </button>
        </div>
      </form>
      <ErrorBanner error={hooks.error} action="Loading the hooks" />
      {hooks.loading && !hooks.data && <Loading what="hooks" />}
      {hooks.data && (
        <DataTable
          rows={rows}
          rowKey={(hook) => hook.id}
          caption="Inbound hooks"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No inbound hooks.">
              Create one to let a form, a CRM or your own backend start runs by POSTing JSON to a URL, without an API token.
            </EmptyState>
          }
          columns={[
            { header: 'Name', className: 'cell-wrap', cell: (hook) => hook.name },
            { header: 'Status', cell: (hook) => <StateBadge status={hook.status} /> },
            {
              header: 'URL',
              className: 'cell-wrap',
              cell: (hook) => (
                <>
                  <code>{hook.url}</code> <CopyButton text={hook.url} label="Copy URL" />
                </>
              ),
            },
            { header: 'Created', cell: (hook) => <Time value={hook.createdAt} /> },
            {
              header: 'Actions',
              hideHeader: true,
              cell: (hook) => (
                <>
                  {hook.status !== 'REVOKED' && (
                    <ConfirmAction
                      label="Revoke"
                      question={`Revoke the hook “${hook.name}”? Its URL answers 410 from now on.`}
                      confirmLabel="Yes, revoke it"
                      busy={revoke.isBusy(hook.id)}
                      onConfirm={() => revoke.run(hook.id)}
                    />
                  )}
                  <ErrorBanner error={revoke.errorFor(hook.id)} action="Revoking" />
                </>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
