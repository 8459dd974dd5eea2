/** Ours (DESIGN section 12 names the 404's; the rest it leaves to us): what the schedule routes refuse with. */
export const SCHEDULE_MESSAGES = {
  notFound: 'Schedule not found',
  fromToRequired: 'from and to are required',
  dateInvalid: (field: 'from' | 'to') => `${field} must be an ISO 8601 date-time`,
  fromNotBeforeTo: 'from must be before to',
  unknownField: (field: string) => `Unknown field: ${field}`,
  tooMany: (limit: number) => `A backfill may start at most ${limit} runs; choose a shorter range`,
} as const;

/** The most fire times one backfill may start (DESIGN section 12; the scheduler says so in its reply too). */
export const MAX_BACKFILL_FIRES = 1000;
