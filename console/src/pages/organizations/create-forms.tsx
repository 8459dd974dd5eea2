import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { ApiError } from '../../api/api-error.js';
import { useApiCall } from '../../api/use-api.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { projectPath } from '../../shell/paths.js';
import '../../components/config-pages.css';

const NAME_LENGTH = 200;

/** Creates an organization; the signed-in user becomes its OWNER. What was typed stays on an error. */
export function CreateOrganizationForm({ onCreated }: { onCreated: () => void }) {
  const call = useApiCall();
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await call((client) => client.POST('/v1/orgs', { body: { name: name.trim() } }));
      setName('');
      onCreated();
    } catch (caught) {
      setError(caught as ApiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={(event) => void submit(event)} aria-labelledby="new-org-title">
      <h2 id="new-org-title">Create an organization</h2>
      <div className="form-grid">
        <label>
          Organization name
          <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={NAME_LENGTH} placeholder="e.g. Acme shop" />
          <span className="field-help">You become its owner; add members later.</span>
        </label>
      </div>
      <ErrorBanner error={error} action="Creating the organization" />
      <p>
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </p>
    </form>
  );
}

/**
 * Creates a project in an organization and opens its definition page, where a project without
 * a definition is offered the starter of its type.
 */
export function CreateProjectForm({ orgId, orgName }: { orgId: string; orgName: string }) {
  const call = useApiCall();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [type, setType] = useState<'CHATBOT' | 'AUTOMATION'>('AUTOMATION');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await call((client) => client.POST('/v1/orgs/{orgId}/projects', { params: { path: { orgId } }, body: { name: name.trim(), type } }));
      navigate(projectPath(orgId, created.projectId, 'definition'));
    } catch (caught) {
      setError(caught as ApiError);
      setBusy(false);
    }
  }

  return (
    <details className="create-project">
      <summary>New project in {orgName}</summary>
      <form onSubmit={(event) => void submit(event)} aria-label={`New project in ${orgName}`}>
        <div className="form-grid">
          <label>
            Project name
            <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={NAME_LENGTH} placeholder="e.g. Order updates" />
          </label>
          <label>
            Type
            <select value={type} onChange={(event) => setType(event.target.value as 'CHATBOT' | 'AUTOMATION')}>
              <option value="AUTOMATION">Automation (a workflow started by an event)</option>
              <option value="CHATBOT">Chatbot (a bot, and a flow started by an event)</option>
            </select>
          </label>
        </div>
        <ErrorBanner error={error} action="Creating the project" />
        <p>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create project'}
          </button>
        </p>
      </form>
    </details>
  );
}
