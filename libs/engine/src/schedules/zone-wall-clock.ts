/**
 * Wall-clock times in an IANA time zone, as "naive" epoch milliseconds: the local date and
 * time read as if it were UTC. Cron matches naive times; these functions map them to instants
 * and back, with DESIGN section 12's rules for daylight saving.
 */

const DAY_MS = 24 * 3600 * 1000;

/** Zones whose offset is always 0, answered without asking Intl (the common case, and fast). */
const ALWAYS_UTC = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu']);

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `instantMs`, in milliseconds (+1 h in Berlin in winter). */
export function zoneOffsetMs(timeZone: string, instantMs: number): number {
  if (ALWAYS_UTC.has(timeZone)) return 0;
  let formatter = offsetFormatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormatters.set(timeZone, formatter);
  }
  // "1/1/2026, GMT+01:00"; "GMT" alone for a zero offset; seconds for old local mean times.
  const match = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(formatter.format(instantMs));
  if (match === null || match[1] === undefined) return 0;
  const magnitude = (Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0)) * 1000;
  return match[1] === '-' ? -magnitude : magnitude;
}

/** The wall clock at `instantMs`, as a naive time. */
export function wallClockOf(timeZone: string, instantMs: number): number {
  return instantMs + zoneOffsetMs(timeZone, instantMs);
}

/**
 * The instant a wall-clock time stands for. A time the clock skips (spring forward) is the
 * first instant after the gap, the moment of the change; a time the clock shows twice (fall
 * back) is its first occurrence. So the mapping never goes backwards as the wall clock goes
 * forwards, and every time in a gap lands on one instant.
 */
export function instantOfWallClock(timeZone: string, naiveMs: number): number {
  if (ALWAYS_UTC.has(timeZone)) return naiveMs;
  // The offsets a day either side cover any one change of offset around this time.
  const before = zoneOffsetMs(timeZone, naiveMs - DAY_MS);
  const after = zoneOffsetMs(timeZone, naiveMs + DAY_MS);
  const candidates = [naiveMs - before, naiveMs - after].filter((instant) => wallClockOf(timeZone, instant) === naiveMs);
  if (candidates.length > 0) return Math.min(...candidates);
  if (before === after) return naiveMs - before;
  return changeInstant(timeZone, naiveMs - after, naiveMs - before, before);
}

/** The first instant in [low, high] whose offset is no longer `oldOffset` (found by halving). */
function changeInstant(timeZone: string, low: number, high: number, oldOffset: number): number {
  // Offsets change on whole seconds; search in seconds.
  let lo = Math.floor(low / 1000);
  let hi = Math.ceil(high / 1000);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (zoneOffsetMs(timeZone, mid * 1000) === oldOffset) lo = mid + 1;
    else hi = mid;
  }
  return lo * 1000;
}

/**
 * The zone's canonical spelling (`europe/berlin` → `Europe/Berlin`), or undefined when it is
 * not an IANA time zone name. Fixed offsets such as "+01:00" are refused: they have no rules.
 */
export function resolveTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
