import { DataTable, type Column } from '../../components/data-table.js';
import { Duration, Time } from '../../components/time-display.js';
import type { CallbackAttemptView } from './run-types.js';

const COLUMNS: Column<CallbackAttemptView>[] = [
  { header: 'Attempt', cell: (attempt) => `${attempt.attempt}${attempt.final ? ' (last)' : ''}` },
  { header: 'At', cell: (attempt) => <Time value={attempt.attemptedAt} /> },
  { header: 'Outcome', cell: (attempt) => attempt.outcome.toLowerCase().replace(/_/g, ' ') },
  { header: 'Status code', cell: (attempt) => attempt.statusCode ?? 'none' },
  { header: 'Took', cell: (attempt) => <Duration ms={attempt.durationMs} /> },
  { header: 'Error', className: 'error-cell', cell: (attempt) => attempt.error ?? '' },
];

/** Each delivery attempt of the run-finished callback: when, the answer's status code, how long. */
export function CallbackAttempts({ attempts }: { attempts: CallbackAttemptView[] }) {
  return (
    <DataTable
      rows={attempts}
      columns={COLUMNS}
      rowKey={(attempt) => `${attempt.webhookId}-${attempt.attempt}`}
      caption="Callback attempts"
      empty={<p className="muted">No callback attempts (the run has no callback URL, or it has not finished).</p>}
    />
  );
}
