import { useParams, useSearchParams } from 'react-router';
import { useResource } from '../api/use-api.js';
import { useProject } from '../api/use-project.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { RequestBuilder } from './templates/request-builder.js';
import { endpointsFor, type RunEndpoint } from './templates/run-endpoints.js';
import { TemplateLibrary } from './templates/template-library.js';
import '../components/config-pages.css';

/** The template library and the request example builder; the builder's choice lives in the URL. */
export function TemplatesPage() {
  const { orgId = '', projectId = '' } = useParams();
  const project = useProject(orgId, projectId);
  const templates = useResource((client) => client.GET('/v1/orgs/{orgId}/projects/{projectId}/templates', { params: { path: { orgId, projectId } } }), [orgId, projectId]);
  const [search, setSearch] = useSearchParams();
  const type = project.data?.type;
  const endpoints = endpointsFor(type);
  const asked = search.get('endpoint') as RunEndpoint | null;
  const endpoint: RunEndpoint | '' = asked && endpoints.some(([name]) => name === asked) ? asked : (endpoints.find(([name]) => name.endsWith('trigger-async'))?.[0] ?? '');
  const templateId = search.get('template') ?? '';

  const choose = (choice: { endpoint: RunEndpoint | ''; templateId: string }) =>
    setSearch(
      (previous) => {
        const next = new URLSearchParams(previous);
        next.set('endpoint', choice.endpoint);
        if (choice.templateId) next.set('template', choice.templateId);
        else next.delete('template');
        return next;
      },
      { replace: true },
    );

  return (
    <>
      <PageHeading title="Templates and request examples" />
      <ErrorBanner error={project.error} action="Loading the project" />
      {!project.data && project.loading && <Loading what="the project" />}
      {project.data && (
        <>
          <TemplateLibrary
            orgId={orgId}
            projectId={projectId}
            projectType={type}
            templates={templates}
            onUse={(template) => {
              choose({ endpoint: template.endpoint as RunEndpoint, templateId: template.id });
              document.getElementById('builder-title')?.scrollIntoView();
            }}
          />
          <RequestBuilder orgId={orgId} projectId={projectId} projectType={type} templates={templates.data?.data ?? []} endpoint={endpoint} templateId={templateId} onChange={choose} />
        </>
      )}
    </>
  );
}
