import { useEffect } from 'react';
import { Link, useParams } from 'react-router';
import { useResource } from '../api/use-api.js';
import { useEventStream } from '../api/use-event-stream.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorBanner } from '../components/error-banner.js';
import { JsonView } from '../components/json-view.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { FINAL_STATUSES, StatusBadge } from '../components/status-badge.js';
import { Duration, formatDuration, Time } from '../components/time-display.js';
import { projectPath } from '../shell/paths.js';
import { CallbackAttempts } from './run/callback-attempts.js';
import { RunGraph } from './run/run-graph.js';
import { ApprovalActions, ScheduleActions } from './run/run-actions.js';
import { attemptsOf, pendingApprovalOf, stepsOf } from './run/run-types.js';
import { StepsTimeline } from './run/steps-timeline.js';

/** A run in progress whose event stream broke reads itself again this often. */
export const RUN_POLL_MS = 2_000;

/** The story of one run: status and timing, steps, the error where it happened, data, callbacks, actions. */
export function RunPage() {
  const { orgId = '', projectId = '', invocationId = '' } = useParams();
  const run = useResource(
    (client) => client.GET('/v1/orgs/{orgId}/external-invocations/{invocationId}', { params: { path: { orgId, invocationId } } }),
    [orgId, invocationId],
  );
  const live = run.data !== undefined && !FINAL_STATUSES.has(run.data.status);
  // A run in progress follows its event stream (each event reads the run again); it polls only
  // when the stream cannot be kept open (a proxy that buffers or cuts it).
  const stream = useEventStream(live ? `/v1/orgs/${orgId}/external-invocations/${invocationId}/events` : null, run.reload);
  useLivePolling(live && stream === 'broken', run.reload);
  const data = run.data;
  const steps = stepsOf(data?.steps);
  const failedStep = steps.find((step) => step.status === 'FAILED');
  const pending = pendingApprovalOf(data?.pendingApproval);
  const lateMs = data?.scheduledFor && data.startedAt ? Date.parse(data.startedAt) - Date.parse(data.scheduledFor) : null;

  return (
    <>
      <p className="breadcrumb">
        <Link to={projectPath(orgId, projectId, 'logs')}>← Logs</Link>
      </p>
      <PageHeading title={`Run ${invocationId.slice(0, 8)}`}>
        {data && <StatusBadge status={data.status} />}
        <CopyButton text={invocationId} label="Copy run id" />
      </PageHeading>
      <ErrorBanner error={run.error} action="Reading the run" />
      {!data && !run.error && <Loading what="the run" />}
      {data && (
        <>
          {live && (
            <p className="muted live" role="status">
              In progress: this page updates by itself.
            </p>
          )}
          <dl className="figures figures-small run-summary">
            <div>
              <dt>Run id</dt>
              <dd className="mono">{data.invocationId}</dd>
            </div>
            <div>
              <dt>Kind</dt>
              <dd>{[data.targetType, data.mode, data.triggerSource].filter(Boolean).join(' · ').toLowerCase()}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>
                <Time value={data.createdAt} />
              </dd>
            </div>
            <div>
              <dt>Started</dt>
              <dd>
                <Time value={data.startedAt} />
              </dd>
            </div>
            <div>
              <dt>Finished</dt>
              <dd>
                <Time value={data.completedAt} />
              </dd>
            </div>
            <div>
              <dt>Duration</dt>
              <dd>
                <Duration ms={data.durationMs} />
              </dd>
            </div>
            {data.scheduledFor && (
              <div>
                <dt>Due</dt>
                <dd>
                  <Time value={data.scheduledFor} />
                  {lateMs !== null && <div className="muted">{lateMs > 0 ? `started ${formatDuration(lateMs)} late` : 'started on time'}</div>}
                </dd>
              </div>
            )}
          </dl>
          {data.errorMessage && (
            <section className="run-error" aria-labelledby="error-heading">
              <h2 id="error-heading">{failedStep ? `Failed at step ${failedStep.nodeId} (${failedStep.type})` : `The run ${data.status === 'TIMEOUT' ? 'timed out' : 'failed'}`}</h2>
              <pre className="error-text">{data.errorMessage}</pre>
              <CopyButton text={data.errorMessage} label="Copy error" />
            </section>
          )}
          {data.status === 'SUSPENDED' && pending && <ApprovalActions orgId={orgId} invocationId={invocationId} pending={pending} onDone={run.reload} />}
          {data.status === 'SCHEDULED' && <ScheduleActions orgId={orgId} invocationId={invocationId} scheduledFor={data.scheduledFor} onDone={run.reload} />}
          <RunGraph orgId={orgId} projectId={projectId} run={data} steps={steps} />
          <section aria-labelledby="steps-heading">
            <h2 id="steps-heading">Steps</h2>
            <StepsTimeline steps={steps} />
          </section>
          <section aria-labelledby="data-heading">
            <h2 id="data-heading">Data</h2>
            <div className="json-grid">
              <JsonView label="Payload" value={data.requestPayload} />
              <JsonView label="Result" value={data.result} />
              <JsonView label="Trace" value={data.trace} />
            </div>
          </section>
          <section aria-labelledby="callbacks-heading">
            <h2 id="callbacks-heading">Callback attempts</h2>
            <CallbackAttempts attempts={attemptsOf(data.callbackAttempts)} />
          </section>
        </>
      )}
    </>
  );
}


function useLivePolling(live: boolean, reload: () => void) {
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, RUN_POLL_MS);
    return () => clearInterval(timer);
  }, [live, reload]);
}
