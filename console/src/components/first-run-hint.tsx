import { useResource } from '../api/use-api.js';
import { CopyButton } from './copy-button.js';
import { ErrorBanner } from './error-banner.js';

/**
 * The empty state of a project without runs: the request example builder's curl line for its
 * first run (the token is the `$RUNLINE_TOKEN` placeholder, never a real one).
 */
export function FirstRunHint({ orgId, projectId, projectType, title = 'No runs yet' }: { orgId: string; projectId: string; projectType: string | undefined; title?: string }) {
  const endpoint = projectType === 'AUTOMATION' ? 'automations.trigger-async' : 'flows.trigger-async';
  const example = useResource(
    projectType
      ? (client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/request-example', { params: { path: { orgId, projectId }, query: { endpoint } } })
      : null,
    [orgId, projectId, endpoint],
  );
  return (
    <div className="empty first-run">
      <h2>{title}</h2>
      <p>Start {title === 'No runs yet' ? 'the first' : 'a'} run of this project with an API token that has the trigger scope (create one under API access):</p>
      <ErrorBanner error={example.error} action="Building the example request" />
      {example.data && (
        <>
          <pre className="snippet">
            <code>{example.data.snippets.curl}</code>
          </pre>
          <CopyButton text={example.data.snippets.curl} label="Copy the curl line" />
        </>
      )}
    </div>
  );
}
