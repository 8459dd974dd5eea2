import { useNavigate, useParams } from 'react-router';
import { useResource } from '../api/use-api.js';
import { projectPath } from './paths.js';

/** The organization and project being looked at; a change keeps the current page. */
export function ProjectPicker({ page }: { page: string }) {
  const { orgId = '', projectId = '' } = useParams();
  const navigate = useNavigate();
  const orgs = useResource((client) => client.GET('/v1/orgs'), []);
  const projects = useResource((client) => client.GET('/v1/orgs/{orgId}/projects', { params: { path: { orgId } } }), [orgId]);

  async function chooseOrg(nextOrg: string) {
    navigate(`/?org=${encodeURIComponent(nextOrg)}`);
  }

  return (
    <div className="picker">
      <label>
        <span className="picker-label">Organization</span>
        <select value={orgId} onChange={(event) => void chooseOrg(event.target.value)}>
          {!orgs.data && <option value={orgId}>{orgId}</option>}
          {orgs.data?.data.map((org) => (
            <option key={org.orgId} value={org.orgId}>
              {org.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="picker-label">Project</span>
        <select value={projectId} onChange={(event) => navigate(projectPath(orgId, event.target.value, page))}>
          {!projects.data && <option value={projectId}>{projectId}</option>}
          {projects.data?.data.map((project) => (
            <option key={project.projectId} value={project.projectId}>
              {project.name} ({project.type.toLowerCase()})
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
