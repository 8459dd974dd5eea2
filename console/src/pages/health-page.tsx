import { Link, useParams, useSearchParams } from 'react-router';
import { useResource } from '../api/use-api.js';
import { useProject } from '../api/use-project.js';
import { ErrorBanner } from '../components/error-banner.js';
import { FirstRunHint } from '../components/first-run-hint.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { RunsChart } from '../components/runs-chart.js';
import { RunsTable } from '../components/runs-table.js';
import { formatDuration } from '../components/time-display.js';
import { projectPath } from '../shell/paths.js';

const WINDOWS = { '24h': ['Last 24 hours', 24 * 3_600_000], '7d': ['Last 7 days', 7 * 86_400_000], '30d': ['Last 30 days', 30 * 86_400_000] } as const;
type WindowKey = keyof typeof WINDOWS;
/** What a waiting run waits for (`trace.flowControl.waitingFor`), in the page's words. */
const WAIT_REASONS = [
  ['concurrency', 'For a concurrency slot'],
  ['throttle', 'For the throttle'],
  ['debounce', 'In a debounce burst'],
  ['project', 'For the project limit'],
] as const;
/** Health refreshes itself this often while the tab is visible. */
const HEALTH_POLL_MS = 10_000;

export function HealthPage() {
  const { orgId = '', projectId = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const windowKey: WindowKey = (search.get('window') as WindowKey) in WINDOWS ? (search.get('window') as WindowKey) : '24h';
  const project = useProject(orgId, projectId);
  const metrics = useResource(
    (client) => {
      const to = new Date();
      const from = new Date(to.getTime() - WINDOWS[windowKey][1]);
      return client.GET('/v1/orgs/{orgId}/external-invocations/metrics', {
        params: { path: { orgId }, query: { projectId, from: from.toISOString(), to: to.toISOString(), bucket: windowKey === '24h' ? 'hour' : 'day' } },
      });
    },
    [orgId, projectId, windowKey],
    { pollMs: HEALTH_POLL_MS },
  );
  const failures = useResource(
    (client) => client.GET('/v1/orgs/{orgId}/external-invocations/logs', { params: { path: { orgId }, query: { projectId, status: 'FAILED', limit: 5 } } }),
    [orgId, projectId],
    { pollMs: HEALTH_POLL_MS },
  );
  const m = metrics.data;
  const failedLink = `${projectPath(orgId, projectId, 'logs')}?status=FAILED&status=TIMEOUT`;

  return (
    <>
      <PageHeading title={`Health${project.data ? ` of ${project.data.name}` : ''}`}>
        <label className="inline-field">
          <span>Window</span>
          <select value={windowKey} onChange={(event) => setSearch({ window: event.target.value }, { replace: true })}>
            {Object.entries(WINDOWS).map(([key, [words]]) => (
              <option key={key} value={key}>
                {words}
              </option>
            ))}
          </select>
        </label>
      </PageHeading>
      <ErrorBanner error={metrics.error} action="Reading the health figures" />
      {!m && !metrics.error && <Loading what="health figures" />}
      {m && (
        <div data-ready="health">
          <dl className="figures" aria-label="Runs in the window">
            <div>
              <dt>Runs</dt>
              <dd>{m.totals.triggered.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Succeeded</dt>
              <dd>{m.totals.succeeded.toLocaleString()}</dd>
            </div>
            <div className={m.totals.failed > 0 ? 'figure-bad' : undefined}>
              <dt>Failed</dt>
              <dd>
                {m.totals.failed > 0 ? <Link to={failedLink}>{m.totals.failed.toLocaleString()}</Link> : 0}
              </dd>
            </div>
            <div>
              <dt>Timed out</dt>
              <dd>{m.totals.timeout.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Cancelled</dt>
              <dd>{m.totals.cancelled.toLocaleString()}</dd>
            </div>
            <div>
              <dt>In progress</dt>
              <dd>{m.totals.inProgress.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Median duration</dt>
              <dd>{formatDuration(m.medianDurationMs)}</dd>
            </div>
            <div>
              <dt>p95 duration</dt>
              <dd>{formatDuration(m.p95DurationMs)}</dd>
            </div>
            <div>
              <dt>Callbacks delivered</dt>
              <dd>{m.callbacks.delivered.toLocaleString()}</dd>
            </div>
            <div className={m.callbacks.failed > 0 ? 'figure-bad' : undefined}>
              <dt>Callbacks failed</dt>
              <dd>{m.callbacks.failed.toLocaleString()}</dd>
            </div>
          </dl>
          <section aria-labelledby="waiting-heading">
            <h2 id="waiting-heading">Waiting now</h2>
            <p className="muted">Queued runs flow control holds back now, whatever the window, by what they wait for.</p>
            <dl className="figures" aria-label="Runs waiting now, by reason">
              <div>
                <dt>Waiting</dt>
                <dd>{m.totals.waiting.toLocaleString()}</dd>
              </div>
              {WAIT_REASONS.map(([reason, words]) => (
                <div key={reason}>
                  <dt>{words}</dt>
                  <dd>{m.waitingByReason[reason].toLocaleString()}</dd>
                </div>
              ))}
            </dl>
          </section>
          <section aria-labelledby="chart-heading">
            <h2 id="chart-heading">Runs over time</h2>
            <RunsChart series={m.series} bucket={m.bucket ?? (windowKey === '24h' ? 'hour' : 'day')} />
          </section>
          {m.totals.triggered === 0 && m.recent.length === 0 ? (
            <FirstRunHint orgId={orgId} projectId={projectId} projectType={project.data?.type} />
          ) : (
            <>
              <section aria-labelledby="failures-heading">
                <h2 id="failures-heading">Latest failures</h2>
                <ErrorBanner error={failures.error} action="Listing the latest failures" />
                {failures.data && failures.data.data.length === 0 && <p className="muted">No failed runs. </p>}
                {failures.data && failures.data.data.length > 0 && (
                  <>
                    <RunsTable orgId={orgId} runs={failures.data.data} caption="Latest failed runs" />
                    <p>
                      <Link to={failedLink}>All failed and timed-out runs</Link>
                    </p>
                  </>
                )}
              </section>
              <section aria-labelledby="recent-heading">
                <h2 id="recent-heading">Recent runs</h2>
                <RunsTable orgId={orgId} runs={m.recent} caption="Recent runs" />
              </section>
            </>
          )}
        </div>
      )}
    </>
  );
}
