const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A time in the viewer's zone; the UTC instant on hover (and in the datetime attribute). */
export function Time({ value, empty = '—' }: { value: string | null | undefined; empty?: string }) {
  if (!value) return <span>{empty}</span>;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return <span>{value}</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {local.format(date)}
    </time>
  );
}

/** 850 ms, 4.2 s, 3 min 5 s, 2 h 10 min: ms below a second, then the largest units that fit. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

export function Duration({ ms }: { ms: number | null | undefined }) {
  return <span className="duration">{formatDuration(ms)}</span>;
}
