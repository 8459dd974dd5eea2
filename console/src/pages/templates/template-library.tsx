import { useState, type FormEvent } from 'react';
import type { Schema } from '@runline/api-client';
import { ApiError } from '../../api/api-error.js';
import { useApiCall, type Resource } from '../../api/use-api.js';
import { useRowAction } from '../../api/use-row-action.js';
import { ConfirmAction } from '../../components/confirm-action.js';
import { DataTable, EmptyState } from '../../components/data-table.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Loading } from '../../components/loading.js';
import { Time } from '../../components/time-display.js';
import { endpointsFor, type RunEndpoint } from './run-endpoints.js';

type Template = Schema<'Template'>;
interface Draft {
  id?: string;
  name: string;
  endpoint: RunEndpoint | '';
  body: string;
}

/** The template library: saved request bodies for one run endpoint each; create, edit, delete. */
export function TemplateLibrary({
  orgId,
  projectId,
  projectType,
  templates,
  onUse,
}: {
  orgId: string;
  projectId: string;
  projectType: string | undefined;
  templates: Resource<{ data: Template[] }>;
  onUse: (template: Template) => void;
}) {
  const call = useApiCall();
  const endpoints = endpointsFor(projectType);
  const fresh = (): Draft => ({ name: '', endpoint: endpoints.find(([name]) => name.endsWith('trigger-async'))?.[0] ?? endpoints[0]?.[0] ?? '', body: '{\n  \n}' });
  const [draft, setDraft] = useState<Draft>();
  const [error, setError] = useState<ApiError | string>();
  const [busy, setBusy] = useState(false);
  const current = draft ?? fresh();

  async function save(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    let body: Record<string, never>;
    try {
      const parsed: unknown = JSON.parse(current.body);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('The body must be a JSON object, like {"orderId": "o-1"}');
      body = parsed as Record<string, never>;
    } catch (caught) {
      setError(`The body is not valid JSON: ${(caught as Error).message}`);
      return;
    }
    setBusy(true);
    try {
      const payload = { name: current.name.trim(), endpoint: current.endpoint as RunEndpoint, body };
      if (current.id) {
        const id = current.id;
        await call((client) => client.PUT('/v1/orgs/{orgId}/projects/{projectId}/templates/{id}', { params: { path: { orgId, projectId, id } }, body: payload }));
      } else await call((client) => client.POST('/v1/orgs/{orgId}/projects/{projectId}/templates', { params: { path: { orgId, projectId } }, body: payload }));
      setDraft(undefined);
      templates.reload();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  const remove = useRowAction(async (id) => {
    await call((client) => client.DELETE('/v1/orgs/{orgId}/projects/{projectId}/templates/{id}', { params: { path: { orgId, projectId, id } } }));
    if (draft?.id === id) setDraft(undefined);
    templates.reload();
  });

  const rows = templates.data?.data ?? [];
  return (
    <section aria-labelledby="library-title">
      <h2 id="library-title">Template library</h2>
      <form className="card" onSubmit={(event) => void save(event)} aria-labelledby="template-form-title">
        <h3 id="template-form-title">{current.id ? `Edit “${current.name || 'template'}”` : 'New template'}</h3>
        <div className="form-grid">
          <label>
            Name
            <input value={current.name} onChange={(event) => setDraft({ ...current, name: event.target.value })} required placeholder="e.g. paid order" />
          </label>
          <label>
            Endpoint
            <select value={current.endpoint} onChange={(event) => setDraft({ ...current, endpoint: event.target.value as RunEndpoint })} required>
              {endpoints.map(([name, , words]) => (
                <option key={name} value={name}>
                  {name}: {words}
                </option>
              ))}
            </select>
            <span className="field-help">Only the endpoints of {projectType === 'AUTOMATION' ? 'an automation' : 'a chatbot'} project.</span>
          </label>
          <label className="wide">
            Body (JSON)
            <textarea rows={6} className="mono" value={current.body} onChange={(event) => setDraft({ ...current, body: event.target.value })} spellCheck={false} />
          </label>
        </div>
        <ErrorBanner error={error} action="Saving the template" />
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Saving…' : current.id ? 'Save changes' : 'Add template'}
          </button>
          {current.id && (
            <button type="button" className="button" onClick={() => { setDraft(undefined); setError(undefined); }}>
              Cancel the edit
            </button>
          )}
        </div>
      </form>
      <ErrorBanner error={templates.error} action="Loading the templates" />
      {templates.loading && !templates.data && <Loading what="templates" />}
      {templates.data && (
        <DataTable
          rows={rows}
          rowKey={(template) => template.id}
          caption="Templates"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No templates yet.">
              Save a request body you send often (a test order, a sample message) and the builder below turns it into curl, JavaScript and Python.
            </EmptyState>
          }
          columns={[
            { header: 'Name', className: 'cell-wrap', cell: (template) => template.name },
            { header: 'Endpoint', cell: (template) => <code>{template.endpoint}</code> },
            { header: 'Updated', cell: (template) => <Time value={template.updatedAt} /> },
            {
              header: 'Actions',
              hideHeader: true,
              className: 'row-links',
              cell: (template) => (
                <>
                  <button type="button" className="button button-small" onClick={() => onUse(template)} aria-label={`Use ${template.name} in the request builder`}>
                    Use
                  </button>{' '}
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Edit ${template.name}`}
                    onClick={() => {
                      setError(undefined);
                      setDraft({ id: template.id, name: template.name, endpoint: template.endpoint as RunEndpoint, body: JSON.stringify(template.body, null, 2) });
                    }}
                  >
                    Edit
                  </button>{' '}
                  <ConfirmAction label="Delete" question={`Delete the template “${template.name}”?`} confirmLabel="Yes, delete it" busy={remove.isBusy(template.id)} onConfirm={() => remove.run(template.id)} />
                  <ErrorBanner error={remove.errorFor(template.id)} action="Deleting" />
                </>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
