import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import type { ApiError } from '../api/api-error.js';
import { useApiCall, useResource } from '../api/use-api.js';
import { useRowAction } from '../api/use-row-action.js';
import { useProject } from '../api/use-project.js';
import { ConfirmAction } from '../components/confirm-action.js';
import { DataTable, EmptyState } from '../components/data-table.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { ShownOnce } from '../components/shown-once.js';
import { Time } from '../components/time-display.js';
import '../components/config-pages.css';

type Scope = 'bot:invoke' | 'flow:trigger' | 'automation:trigger';
const SCOPES: Array<[Scope, string]> = [
  ['bot:invoke', 'send messages to the chatbot (bots.message, bots.invoke)'],
  ['flow:trigger', 'start the chatbot’s flow (flows.trigger, flows.trigger-async)'],
  ['automation:trigger', 'start the automation (automations.trigger, automations.trigger-async)'],
];

/** The scopes a new token of this project type starts with: the ones its endpoints need. */
const defaultScopes = (type: string | undefined): Scope[] => (type === 'AUTOMATION' ? ['automation:trigger'] : ['bot:invoke', 'flow:trigger']);

function CreateTokenForm({ orgId, projectId, projectType, onCreated }: { orgId: string; projectId: string; projectType?: string; onCreated: (token: string) => void }) {
  const call = useApiCall();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[] | null>(null);
  const [expiresAt, setExpiresAt] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const chosen = scopes ?? defaultScopes(projectType);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await call((client) =>
        client.POST('/v1/orgs/{orgId}/projects/{projectId}/api-tokens', {
          params: { path: { orgId, projectId } },
          body: { name: name.trim(), scopes: chosen, ...(expiresAt ? { expiresAt: new Date(expiresAt).toISOString() } : {}) },
        }),
      );
      setName('');
      setExpiresAt('');
      setScopes(null);
      onCreated(created.token);
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="new-token-title">
      <h2 id="new-token-title">Create a token</h2>
      <div className="form-grid">
        <label>
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} placeholder="e.g. billing backend" />
          <span className="field-help">Say where it is used, so you know what breaks when you revoke it.</span>
        </label>
        <label>
          Expires (optional)
          <input type="datetime-local" value={expiresAt} onChange={(event) => setExpiresAt(event.target.value)} />
          <span className="field-help">Your local time; empty means it never expires.</span>
        </label>
        <fieldset className="scope-set wide">
          <legend>Scopes: what the token may do</legend>
          {SCOPES.map(([scope, help]) => (
            <label key={scope} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(scope)}
                onChange={(event) => setScopes(event.target.checked ? [...chosen, scope] : chosen.filter((item) => item !== scope))}
              />
              <span>
                <code>{scope}</code> <span className="field-help">{help}</span>
              </span>
            </label>
          ))}
        </fieldset>
      </div>
      <ErrorBanner error={error} action="Creating the token" />
      <div className="actions">
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create token'}
        </button>
      </div>
    </form>
  );
}

/** API tokens of the project: create (shown once), list with their last use, revoke. */
export function ApiAccessPage() {
  const { orgId = '', projectId = '' } = useParams();
  const project = useProject(orgId, projectId);
  const tokens = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/api-tokens', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const call = useApiCall();
  const [issued, setIssued] = useState<string>();
  const revoke = useRowAction(async (id) => {
    await call((client) => client.DELETE('/v1/orgs/{orgId}/projects/{projectId}/api-tokens/{tokenId}', { params: { path: { orgId, projectId, tokenId: id } } }));
    tokens.reload();
  });

  const rows = tokens.data?.data ?? [];
  return (
    <>
      <PageHeading title="API access" />
      <p className="muted">
        A token lets a program start runs of this project over the public API (<code>Authorization: Bearer rl_ext_…</code>). Runline stores only its hash, so it is shown once, when it is made.
      </p>
      {issued && <ShownOnce title="Your new token" value={issued} what="token" onDone={() => setIssued(undefined)} />}
      <CreateTokenForm
        orgId={orgId}
        projectId={projectId}
        projectType={project.data?.type}
        onCreated={(token) => {
          setIssued(token);
          tokens.reload();
        }}
      />
      <h2>Tokens</h2>
      <ErrorBanner error={tokens.error} action="Loading the tokens" />
      {tokens.loading && !tokens.data && <Loading what="tokens" />}
      {tokens.data && (
        <DataTable
          rows={rows}
          rowKey={(token) => token.id}
          caption="The project’s API tokens"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No tokens yet.">
              Create one above, then send it as <code>Authorization: Bearer …</code> to the run endpoints; the Templates and examples page builds the request for you.
            </EmptyState>
          }
          columns={[
            { header: 'Name', className: 'cell-wrap', cell: (token) => token.name },
            { header: 'Prefix', cell: (token) => <code>{token.prefix}…</code> },
            { header: 'Scopes', cell: (token) => token.scopes.map((scope) => <code key={scope} className="tag">{scope}</code>) },
            { header: 'Last used', cell: (token) => <Time value={token.lastUsedAt} empty="never" /> },
            { header: 'Created', cell: (token) => <Time value={token.createdAt} /> },
            { header: 'Expires', cell: (token) => <Time value={token.expiresAt} empty="never" /> },
            {
              header: 'Actions',
              hideHeader: true,
              cell: (token) => (
                <>
                  <ConfirmAction
                    label="Revoke"
                    question={`Revoke the token “${token.name}”? Programs using it are refused from their next call.`}
                    confirmLabel="Yes, revoke it"
                    busy={revoke.isBusy(token.id)}
                    onConfirm={() => revoke.run(token.id)}
                  />
                  <ErrorBanner error={revoke.errorFor(token.id)} action="Revoking" />
                </>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
