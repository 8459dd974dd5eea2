import { RUN_STATUSES } from '../../components/status-badge.js';

/** The logs' filters, as they stand in the address (`?status=FAILED&status=TIMEOUT&from=…`). */
export interface LogFilters {
  statuses: string[];
  targetType: string;
  mode: string;
  triggerSource: string;
  from: string;
  to: string;
}

export const FILTER_CHOICES = {
  targetType: ['BOT', 'FLOW', 'AUTOMATION'],
  mode: ['SYNC', 'ASYNC'],
  triggerSource: ['WEBHOOK', 'SCHEDULE', 'POLLING', 'REPLAY'],
} as const;

export function filtersFrom(search: URLSearchParams): LogFilters {
  return {
    statuses: search.getAll('status').filter((status) => (RUN_STATUSES as readonly string[]).includes(status)),
    targetType: search.get('targetType') ?? '',
    mode: search.get('mode') ?? '',
    triggerSource: search.get('triggerSource') ?? '',
    from: search.get('from') ?? '',
    to: search.get('to') ?? '',
  };
}

export function searchOf(filters: LogFilters): URLSearchParams {
  const search = new URLSearchParams();
  for (const status of filters.statuses) search.append('status', status);
  for (const key of ['targetType', 'mode', 'triggerSource', 'from', 'to'] as const) if (filters[key]) search.set(key, filters[key]);
  return search;
}

/** An ISO instant as the value of a datetime-local input (the viewer's zone), and back. */
export function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function fromLocalInput(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

const words = (value: string) => value.toLowerCase();

/** The filter controls; each change applies at once (no submit button). */
export function LogFilterBar({ filters, onChange }: { filters: LogFilters; onChange(next: LogFilters): void }) {
  const toggle = (status: string) =>
    onChange({ ...filters, statuses: filters.statuses.includes(status) ? filters.statuses.filter((item) => item !== status) : [...filters.statuses, status] });
  const active = searchOf(filters).toString() !== '';
  return (
    <div className="filters">
      <fieldset className="status-filter">
        <legend>Status</legend>
        {RUN_STATUSES.map((status) => (
          <label key={status} className="check">
            <input type="checkbox" checked={filters.statuses.includes(status)} onChange={() => toggle(status)} />
            {words(status)}
          </label>
        ))}
      </fieldset>
      <div className="filter-fields">
        {(Object.keys(FILTER_CHOICES) as Array<keyof typeof FILTER_CHOICES>).map((key) => (
          <label key={key}>
            <span>{key === 'targetType' ? 'Kind' : key === 'mode' ? 'Mode' : 'Started by'}</span>
            <select value={filters[key]} onChange={(event) => onChange({ ...filters, [key]: event.target.value })}>
              <option value="">any</option>
              {FILTER_CHOICES[key].map((choice) => (
                <option key={choice} value={choice}>
                  {words(choice)}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label>
          <span>From</span>
          <input type="datetime-local" value={toLocalInput(filters.from)} onChange={(event) => onChange({ ...filters, from: fromLocalInput(event.target.value) })} />
        </label>
        <label>
          <span>To</span>
          <input type="datetime-local" value={toLocalInput(filters.to)} onChange={(event) => onChange({ ...filters, to: fromLocalInput(event.target.value) })} />
        </label>
      </div>
      {active && (
        <p className="current-filter">
          <span>
            Showing:{' '}
            {[
              filters.statuses.length ? filters.statuses.map(words).join(' or ') : null,
              ...(['targetType', 'mode', 'triggerSource'] as const).map((key) => (filters[key] ? words(filters[key]) : null)),
              filters.from ? `from ${new Date(filters.from).toLocaleString()}` : null,
              filters.to ? `to ${new Date(filters.to).toLocaleString()}` : null,
            ]
              .filter(Boolean)
              .join(', ')}
          </span>{' '}
          <button type="button" className="button button-small" onClick={() => onChange(filtersFrom(new URLSearchParams()))}>
            Clear filters
          </button>
        </p>
      )}
    </div>
  );
}
