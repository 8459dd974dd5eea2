import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@runline/runtime';
import type { FireKind } from './schedule-fire-decisions.js';

/**
 * The Schedule triggers' metrics (issue 31): fires started by kind, skips, fires dropped while
 * paused, catch-ups, and each fire's lateness.
 *
 * Lateness here is what the scheduler sees: from the fire's due time (nominal time plus jitter)
 * to the moment its start request left for the invocation service. DESIGN section 12 defines a
 * fire's lateness as its run's `startedAt` minus that due time; the difference is the request's
 * way and the invocation service's recording (a few milliseconds), which `bench:schedules`
 * measures on the runs themselves.
 */
@Injectable()
export class ScheduleMetrics {
  private readonly fires: Counter<'kind'>;
  private readonly skips: Counter;
  private readonly dropped: Counter;
  private readonly notStarted: Counter;
  private readonly retries: Counter;
  private readonly lateness: Histogram;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    this.fires = new Counter({
      name: 'runline_scheduler_schedule_fires_total',
      help: 'Schedule fires whose run this replica asked the invocation service to start, by kind (SCHEDULED, CATCH_UP, BUFFERED, TRIGGER, BACKFILL).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.skips = new Counter({ name: 'runline_scheduler_schedule_skips_total', help: 'Schedule fires skipped because the previous run was not final (overlap).', registers: [registry] });
    this.dropped = new Counter({ name: 'runline_scheduler_schedule_paused_drops_total', help: 'Schedule fires dropped because the schedule was paused.', registers: [registry] });
    this.notStarted = new Counter({ name: 'runline_scheduler_schedule_fires_not_started_total', help: 'Schedule fires the invocation service recorded no run for (quota, unavailable).', registers: [registry] });
    this.retries = new Counter({
      name: 'runline_scheduler_schedule_fire_retries_total',
      help: 'Schedule fire starts the invocation service did not confirm (no answer in time, unavailable), deferred to be sent again with the same key.',
      registers: [registry],
    });
    this.lateness = new Histogram({
      name: 'runline_scheduler_schedule_fire_lateness_seconds',
      help: 'From a schedule fire’s due time (nominal time plus jitter) to the moment its start request was sent.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 60],
      registers: [registry],
    });
  }

  started(kind: FireKind, lateMs: number): void {
    this.fires.inc({ kind });
    // Catch-ups, buffered fires, backfills and run-now are late by design; their lateness would drown the figure.
    if (kind === 'SCHEDULED') this.lateness.observe(Math.max(0, lateMs) / 1000);
  }

  skipped(count: number): void {
    if (count > 0) this.skips.inc(count);
  }

  droppedWhilePaused(count: number): void {
    if (count > 0) this.dropped.inc(count);
  }

  refused(): void {
    this.notStarted.inc();
  }

  deferred(): void {
    this.retries.inc();
  }
}
