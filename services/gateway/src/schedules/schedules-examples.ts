import { type Example, IDS } from '../platform/api-docs/examples.js';

// The schedule routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  scheduleBackfill: { from: '2026-02-23T00:00:00Z', to: '2026-02-28T00:00:00Z' },
} satisfies Record<string, Example>;

const schedule = {
  id: 'daily-report',
  cron: '0 9 * * 1-5',
  every: null,
  timezone: 'Europe/Berlin',
  enabled: true,
  paused: false,
  overlap: 'SKIP',
  catchUp: 'LATEST',
  catchUpWindowSeconds: 3600,
  jitterSeconds: 0,
  startAt: null,
  endAt: null,
  payload: { report: 'daily' },
  nextFireTimes: ['2026-03-02T08:00:00.000Z', '2026-03-03T08:00:00.000Z', '2026-03-04T08:00:00.000Z', '2026-03-05T08:00:00.000Z', '2026-03-06T08:00:00.000Z'],
  lastFire: { scheduledTime: '2026-02-27T08:00:00.000Z', invocationId: IDS.asyncRun, status: 'SUCCEEDED' },
  skippedCount: 0,
};

export const ANSWERS = {
  schedules: { data: [schedule] },
  schedulePaused: { ...schedule, paused: true },
  scheduleRunStarted: { invocationId: IDS.asyncRun },
  scheduleBackfill: { count: 5 },
} satisfies Record<string, Example>;
