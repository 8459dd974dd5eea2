import { memo, useMemo } from 'react';
import { Link } from 'react-router';
import { runPath } from '../shell/paths.js';
import { DataTable, type Column } from './data-table.js';
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

const runColumns = (orgId: string): Column<RunRow>[] => [
  { header: 'Status', cell: (run) => <StatusBadge status={run.status} /> },
  {
    header: 'Run',
    cell: (run) => (
      <Link to={runPath(orgId, run.projectId, run.invocationId)} className="mono" title={run.invocationId}>
        {run.invocationId.slice(0, 8)}
      </Link>
    ),
  },
  { header: 'Kind', cell: (run) => [run.targetType, run.mode, run.triggerSource].filter(Boolean).join(' · ').toLowerCase() },
  {
    header: 'Created',
    cell: (run) => (
      <>
        <Time value={run.createdAt} />
        {run.scheduledFor && (
          <div className="muted">
            due <Time value={run.scheduledFor} />
          </div>
        )}
      </>
    ),
  },
  { header: 'Duration', cell: (run) => <Duration ms={run.durationMs} /> },
  { header: 'Error', className: 'error-cell', cell: (run) => run.errorMessage ?? '' },
];

/** Runs as rows; each opens its run page. Memoised, with its columns kept while the organization
 * is the same: a page's own state changes (loading, a filter being typed) do not re-render 200
 * rows that did not change. */
export const RunsTable = memo(function RunsTable({ orgId, runs, caption }: { orgId: string; runs: RunRow[]; caption: string }) {
  const columns = useMemo(() => runColumns(orgId), [orgId]);
  return <DataTable rows={runs} columns={columns} rowKey={(run) => run.invocationId} caption={caption} narrow="cards" className="runs" />;
});
