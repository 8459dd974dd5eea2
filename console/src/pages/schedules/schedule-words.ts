import cronstrue from 'cronstrue';

const UNITS = { s: 'second', m: 'minute', h: 'hour', d: 'day' } as const;

/**
 * A schedule's expression in words: "At 09:00, Monday through Friday (Europe/Berlin)" for a
 * cron, "Every 15 minutes" for an interval (elapsed time, so no zone). The expression itself
 * is shown beside it, so words that cronstrue cannot give fall back to it quietly.
 */
export function scheduleInWords(schedule: { cron: string | null; every: string | null; timezone: string }): string {
  if (schedule.cron !== null) {
    try {
      return `${cronstrue.toString(schedule.cron, { use24HourTimeFormat: true })} (${schedule.timezone})`;
    } catch {
      return `Cron ${schedule.cron} (${schedule.timezone})`;
    }
  }
  const match = /^(\d+)([smhd])$/.exec(schedule.every ?? '');
  if (match === null) return `Every ${schedule.every ?? '?'}`;
  const count = Number(match[1]);
  const unit = UNITS[match[2] as keyof typeof UNITS];
  return count === 1 ? `Every ${unit}` : `Every ${count} ${unit}s`;
}

const inZone = new Map<string, Intl.DateTimeFormat>();

/**
 * A time as the schedule's own zone shows it, short, beside the viewer's full time: "Mon 09:00
 * Europe/Berlin" (seconds only when they are not 0).
 */
export function formatInZone(iso: string, timeZone: string): string {
  let format = inZone.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    inZone.set(timeZone, format);
  }
  const text = format.format(new Date(iso)).replace(/:00$/, '');
  return `${text} ${timeZone}`;
}

/** A `datetime-local` value (the viewer's wall clock) as ISO 8601 UTC; undefined when empty or not a time. */
export function localInputToIso(value: string): string | undefined {
  if (value === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
