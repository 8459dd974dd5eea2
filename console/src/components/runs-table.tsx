import { memo } from 'react';
import { Link } from 'react-router';
import { runPath } from '../shell/paths.js';
import { StatusBadge } from './status-badge.js';
import { Duration, Time } from './time-display.js';

export interface RunRow {
  invocationId: string;
  projectId: string;
  status: string;
  mode?: string;
  targetType?: string;
  triggerSource?: string;
  createdAt: string;
  durationMs?: number | null;
  errorMessage?: string | null;
  scheduledFor?: string | null;
}

const Row = memo(function Row({ orgId, run }: { orgId: string; run: RunRow }) {
  return (
    <tr>
      <td>
        <StatusBadge status={run.status} />
      </td>
      <td>
        <Link to={runPath(orgId, run.projectId, run.invocationId)} className="mono" title={run.invocationId}>
          {run.invocationId.slice(0, 8)}
        </Link>
      </td>
      <td>
        {[run.targetType, run.mode, run.triggerSource].filter(Boolean).join(' · ').toLowerCase()}
      </td>
      <td>
        <Time value={run.createdAt} />
        {run.scheduledFor && (
          <div className="muted">
            due <Time value={run.scheduledFor} />
          </div>
        )}
      </td>
      <td>
        <Duration ms={run.durationMs} />
      </td>
      <td className="error-cell">{run.errorMessage ?? ''}</td>
    </tr>
  );
});

/** Runs as rows; each opens its run page. Memoised: a page's own state changes (loading, a
 * filter being typed) do not re-render 200 rows that did not change. */
export const RunsTable = memo(function RunsTable({ orgId, runs, caption }: { orgId: string; runs: RunRow[]; caption: string }) {
  return (
    <div className="table-wrap">
      <table className="runs stack-on-phone">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Run</th>
            <th scope="col">Kind</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <Row key={run.invocationId} orgId={orgId} run={run} />
          ))}
        </tbody>
      </table>
    </div>
  );
});
