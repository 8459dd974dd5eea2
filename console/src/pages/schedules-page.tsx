import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { listSchedules, pauseSchedule, resumeSchedule, triggerSchedule, type Schedule } from '../api/schedules-api.js';
import { useApiCall, useResource } from '../api/use-api.js';
import { useRowAction } from '../api/use-row-action.js';
import { DataTable, EmptyState } from '../components/data-table.js';
import { ErrorBanner } from '../components/error-banner.js';
import { Loading } from '../components/loading.js';
import { PageHeading } from '../components/page-heading.js';
import { StatusBadge } from '../components/status-badge.js';
import { Time } from '../components/time-display.js';
import { runPath } from '../shell/paths.js';
import { BackfillForm } from './schedules/backfill-form.js';
import { formatInZone, scheduleInWords } from './schedules/schedule-words.js';
import '../components/config-pages.css';
import './schedules/schedules-page.css';

/** Fires and skips change on their own; the list reloads this often while the tab is visible. */
const SCHEDULES_POLL_MS = 10_000;

const EXAMPLE = `"workflow": {
  …,
  "schedules": [
    { "id": "daily-report", "cron": "0 9 * * 1-5", "timezone": "Europe/Berlin" },
    { "id": "sync", "every": "15m" }
  ]
}`;

/** The state in a word (and an icon), never by colour alone. */
function ScheduleState({ schedule }: { schedule: Schedule }) {
  if (!schedule.enabled) return <span className="badge badge-muted"><span aria-hidden="true">⊘</span> Disabled</span>;
  if (schedule.paused) return <span className="badge badge-warn"><span aria-hidden="true">‖</span> Paused</span>;
  return <span className="badge badge-good"><span aria-hidden="true">▶</span> Active</span>;
}

function NextFires({ schedule }: { schedule: Schedule }) {
  if (schedule.nextFireTimes.length === 0) return <span className="muted">none</span>;
  const zoneDiffers = schedule.timezone !== Intl.DateTimeFormat().resolvedOptions().timeZone;
  return (
    <ol className="next-fires" aria-label={`Next fires of ${schedule.id}`}>
      {schedule.nextFireTimes.map((fire) => (
        <li key={fire}>
          <Time value={fire} />
          {zoneDiffers && <span className="muted"> · {formatInZone(fire, schedule.timezone)}</span>}
        </li>
      ))}
    </ol>
  );
}

/**
 * The Schedule triggers of the published automation (DESIGN section 12): each expression in
 * words, the next fires in the viewer's time and the schedule's, the last run, skips; pause,
 * resume, run now and backfill. Schedules live in the definition; this page runs them.
 */
export function SchedulesPage() {
  const { orgId = '', projectId = '' } = useParams();
  const schedules = useResource(listSchedules(orgId, projectId), [orgId, projectId], { pollMs: SCHEDULES_POLL_MS });
  const call = useApiCall();
  const [startedRuns, setStartedRuns] = useState<Record<string, string>>({});

  const pauseOrResume = useRowAction(async (id) => {
    const schedule = schedules.data?.data.find((row) => row.id === id);
    await call((schedule?.paused ? resumeSchedule : pauseSchedule)(orgId, projectId, id));
    schedules.reload();
  });
  const runNow = useRowAction(async (id) => {
    const { invocationId } = await call(triggerSchedule(orgId, projectId, id));
    setStartedRuns((runs) => ({ ...runs, [id]: invocationId }));
    schedules.reload();
  });

  return (
    <>
      <PageHeading title="Schedules" />
      <p className="field-help">
        The schedules of the published definition. Each fire starts a run of the workflow; times are yours, with the schedule’s own zone beside them. A pause stays through publishes; fires due while paused are dropped.
      </p>
      <ErrorBanner error={schedules.error} action="Loading the schedules" />
      {schedules.loading && !schedules.data && <Loading what="schedules" />}
      {schedules.data && (
        <DataTable
          rows={schedules.data.data}
          rowKey={(schedule) => schedule.id}
          caption="Schedules"
          narrow="labelled-cards"
          empty={
            <EmptyState title="No schedules.">
              Add <code>workflow.schedules</code> to the automation’s definition and publish it: each schedule repeats runs of the workflow, by a cron expression in a time zone or every fixed interval.
              <pre className="schedule-example">{EXAMPLE}</pre>
            </EmptyState>
          }
          columns={[
            {
              header: 'Schedule',
              className: 'cell-wrap',
              cell: (schedule) => (
                <>
                  <strong>{schedule.id}</strong> <ScheduleState schedule={schedule} />
                  <div>{scheduleInWords(schedule)}</div>
                  <div className="muted mono">{schedule.cron ?? `every ${schedule.every ?? '?'}`}</div>
                </>
              ),
            },
            { header: 'Next fires', cell: (schedule) => <NextFires schedule={schedule} /> },
            {
              header: 'Last run',
              cell: (schedule) =>
                schedule.lastFire === null ? (
                  <span className="muted">not yet</span>
                ) : (
                  <>
                    <StatusBadge status={schedule.lastFire.status} />
                    <div>
                      <Link to={runPath(orgId, projectId, schedule.lastFire.invocationId)} title={schedule.lastFire.invocationId}>
                        due <Time value={schedule.lastFire.scheduledTime} />
                      </Link>
                    </div>
                  </>
                ),
            },
            { header: 'Skipped', align: 'end', cell: (schedule) => <span title="Fires skipped because the previous run had not ended (overlap SKIP)">{schedule.skippedCount}</span> },
            {
              header: 'Actions',
              hideHeader: true,
              className: 'schedule-actions',
              cell: (schedule) => (
                <>
                  <button type="button" className="button button-small" onClick={() => void pauseOrResume.run(schedule.id)} disabled={pauseOrResume.isBusy(schedule.id)} aria-label={`${schedule.paused ? 'Resume' : 'Pause'} ${schedule.id}`}>
                    {schedule.paused ? 'Resume' : 'Pause'}
                  </button>{' '}
                  <button type="button" className="button button-small" onClick={() => void runNow.run(schedule.id)} disabled={runNow.isBusy(schedule.id)} aria-label={`Run now: ${schedule.id}`}>
                    Run now
                  </button>
                  {startedRuns[schedule.id] !== undefined && (
                    <p className="outcome" role="status">
                      Run started: <Link to={runPath(orgId, projectId, startedRuns[schedule.id]!)}>open it</Link>
                    </p>
                  )}
                  <ErrorBanner error={pauseOrResume.errorFor(schedule.id)} action={schedule.paused ? 'Resuming' : 'Pausing'} />
                  <ErrorBanner error={runNow.errorFor(schedule.id)} action="Run now" />
                  <BackfillForm orgId={orgId} projectId={projectId} scheduleId={schedule.id} />
                </>
              ),
            },
          ]}
        />
      )}
    </>
  );
}
