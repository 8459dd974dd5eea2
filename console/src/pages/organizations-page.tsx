import { Link, useSearchParams } from 'react-router';
import { useResource } from '../api/use-api.js';
import { DataTable } from '../components/data-table.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { Time } from '../components/time-display.js';
import { projectPath } from '../shell/paths.js';
import { CreateOrganizationForm, CreateProjectForm } from './organizations/create-forms.js';

function Plan({ orgId }: { orgId: string }) {
  const plan = useResource((client) => client.GET('/v1/orgs/{orgId}/plan', { params: { path: { orgId } } }), [orgId]);
  if (plan.error) return <ErrorBanner error={plan.error} action="Reading the plan" />;
  if (!plan.data) return <Loading what="the plan" />;
  const { monthlyQuota, used, rateLimitPerMinute, periodStart, renewalDay } = plan.data;
  const share = monthlyQuota ? Math.min(100, Math.round((used / monthlyQuota) * 100)) : null;
  return (
    <dl className="figures figures-small">
      <div>
        <dt>Runs this period</dt>
        <dd>
          {used.toLocaleString()} {monthlyQuota === null ? 'of unlimited' : `of ${monthlyQuota.toLocaleString()} (${share}%)`}
          {share !== null && <progress max={100} value={share} aria-label="Share of the monthly quota used" />}
        </dd>
      </div>
      <div>
        <dt>Rate limit</dt>
        <dd>{rateLimitPerMinute === null ? "the platform default" : `${rateLimitPerMinute.toLocaleString()} per minute`}</dd>
      </div>
      <div>
        <dt>Period started</dt>
        <dd>
          <Time value={periodStart} />
          {renewalDay ? ` (renews on day ${renewalDay})` : ''}
        </dd>
      </div>
    </dl>
  );
}

function Projects({ orgId }: { orgId: string }) {
  const projects = useResource((client) => client.GET('/v1/orgs/{orgId}/projects', { params: { path: { orgId } } }), [orgId]);
  if (projects.error) return <ErrorBanner error={projects.error} action="Listing the projects" />;
  if (!projects.data) return <Loading what="projects" />;
  return (
    <DataTable
      rows={projects.data.data}
      rowKey={(project) => project.projectId}
      caption="Projects"
      narrow="cards"
      empty={<p className="muted">No projects in this organization yet: create one below.</p>}
      columns={[
        { header: 'Project', cell: (project) => <Link to={projectPath(orgId, project.projectId)}>{project.name}</Link> },
        { header: 'Type', cell: (project) => project.type.toLowerCase() },
        { header: 'Published', cell: (project) => (project.publishedVersion === null ? 'not published' : `version ${project.publishedVersion}`) },
        {
          header: 'Since',
          cell: (project) => (
            <>
              <span className="muted">created</span> <Time value={project.createdAt} />
            </>
          ),
        },
        {
          header: 'Pages',
          hideHeader: true,
          className: 'row-links',
          cell: (project) => (
            <>
              <Link to={projectPath(orgId, project.projectId, 'definition')} aria-label={`Definition of ${project.name}`}>
                Definition
              </Link>{' '}
              <Link to={projectPath(orgId, project.projectId, 'logs')} aria-label={`Logs of ${project.name}`}>
                Logs
              </Link>
            </>
          ),
        },
      ]}
    />
  );
}

/** The caller's organizations; per organization its plan and usage and its projects. */
export function OrganizationsPage() {
  const [search] = useSearchParams();
  const only = search.get('org');
  const orgs = useResource((client) => client.GET('/v1/orgs'), []);
  const shown = orgs.data?.data.filter((org) => !only || org.orgId === only) ?? [];
  return (
    <>
      <PageHeading title="Organizations and projects">
        {only && <Link to="/">Show all organizations</Link>}
      </PageHeading>
      <ErrorBanner error={orgs.error} action="Listing your organizations" />
      {!orgs.data && !orgs.error && <Loading what="organizations" />}
      {orgs.data && orgs.data.data.length === 0 && (
        <div className="empty">
          <p>You are not a member of any organization yet.</p>
          <p className="muted">Create one below, or ask an owner to add you to theirs.</p>
        </div>
      )}
      {shown.map((org) => (
        <section key={org.orgId} className="card" aria-labelledby={`org-${org.orgId}`}>
          <h2 id={`org-${org.orgId}`}>
            {org.name} <span className="tag">{org.role}</span>
          </h2>
          <Plan orgId={org.orgId} />
          <Projects orgId={org.orgId} />
          {org.role !== 'VIEWER' && <CreateProjectForm orgId={org.orgId} orgName={org.name} />}
        </section>
      ))}
      {orgs.data && !only && <CreateOrganizationForm onCreated={orgs.reload} />}
    </>
  );
}
