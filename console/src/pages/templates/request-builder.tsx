import type { Schema } from '@runline/api-client';
import { useResource } from '../../api/use-api.js';
import { CopyButton } from '../../components/copy-button.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { Loading } from '../../components/loading.js';
import { endpointsFor, type RunEndpoint } from './run-endpoints.js';

const LANGUAGES = [
  ['curl', 'curl'],
  ['javascript', 'JavaScript'],
  ['python', 'Python'],
] as const;

/** The request example builder: an endpoint and optionally a template give a request and three snippets to copy. */
export function RequestBuilder({
  orgId,
  projectId,
  projectType,
  templates,
  endpoint,
  templateId,
  onChange,
}: {
  orgId: string;
  projectId: string;
  projectType: string | undefined;
  templates: Schema<'Template'>[];
  endpoint: RunEndpoint | '';
  templateId: string;
  onChange: (choice: { endpoint: RunEndpoint | ''; templateId: string }) => void;
}) {
  const endpoints = endpointsFor(projectType);
  const suitable = templates.filter((template) => template.endpoint === endpoint);
  const example = useResource(
    endpoint
      ? (client) =>
          client.GET('/v1/orgs/{orgId}/projects/{projectId}/request-example', {
            params: { path: { orgId, projectId }, query: { endpoint, ...(templateId ? { templateId } : {}) } },
          })
      : null,
    [orgId, projectId, endpoint, templateId],
  );
  const data = example.data;
  const headers = data ? Object.entries(data.headers).map(([name, value]) => `${name}: ${value}`).join('\n') : '';
  const body = data ? JSON.stringify(data.body, null, 2) : '';

  return (
    <section aria-labelledby="builder-title">
      <h2 id="builder-title">Request example builder</h2>
      <div className="card">
        <div className="form-grid">
          <label>
            Endpoint
            <select value={endpoint} onChange={(event) => onChange({ endpoint: event.target.value as RunEndpoint, templateId: '' })}>
              {endpoints.map(([name, , words]) => (
                <option key={name} value={name}>
                  {name}: {words}
                </option>
              ))}
            </select>
          </label>
          <label>
            Template
            <select value={templateId} onChange={(event) => onChange({ endpoint, templateId: event.target.value })}>
              <option value="">none: the keys the trigger expects</option>
              {suitable.map((template) => (
                <option key={template.id} value={template.id}>
                  {template.name}
                </option>
              ))}
            </select>
          </label>
        </div>
        <p className="field-help">The token is the placeholder <code>$RUNLINE_TOKEN</code>: create a real one under API access and set it in your shell or secrets.</p>
        <ErrorBanner error={example.error} action="Building the example" />
        {example.loading && !data && <Loading what="the example" />}
        {data && (
          <div aria-live="polite">
            <dl className="figures figures-small">
              <div>
                <dt>Method</dt>
                <dd>
                  <code>{data.method}</code>
                </dd>
              </div>
              <div className="wide-figure">
                <dt>URL</dt>
                <dd>
                  <code data-testid="example-url">{data.url}</code> <CopyButton text={data.url} label="Copy the URL" />
                </dd>
              </div>
            </dl>
            <div className="snippet-head">
              <h3>Headers</h3>
            </div>
            <pre className="snippet">
              <code>{headers}</code>
            </pre>
            <div className="snippet-head">
              <h3>Body</h3>
              <CopyButton text={body} label="Copy the body" />
            </div>
            <pre className="snippet">
              <code>{body}</code>
            </pre>
            {LANGUAGES.map(([key, name]) => (
              <div key={key}>
                <div className="snippet-head">
                  <h3>{name}</h3>
                  <CopyButton text={data.snippets[key]} label={`Copy the ${name} snippet`} />
                </div>
                <pre className="snippet" aria-label={`${name} snippet`}>
                  <code>{data.snippets[key]}</code>
                </pre>
              </div>
            ))}
          </div>
        )}
      </div>
    </section>
  );
}
