/**
 * The monthly quota's billing period. It starts at 00:00 UTC on the plan's renewal day (1-28,
 * so every month has it), or on the 1st of the month without one, and lasts until the same day
 * of the next month.
 */
export interface QuotaPeriod {
  start: Date;
  end: Date;
}

export function quotaPeriodOf(at: Date, renewalDay: number | null): QuotaPeriod {
  const day = renewalDay ?? 1;
  if (!Number.isInteger(day) || day < 1 || day > 28) throw new Error(`renewal day ${day} is not 1-28`);
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  const startMonth = at.getUTCDate() >= day ? month : month - 1;
  // Date.UTC rolls month -1 and 12 over into the neighbouring years.
  return { start: new Date(Date.UTC(year, startMonth, day)), end: new Date(Date.UTC(year, startMonth + 1, day)) };
}
