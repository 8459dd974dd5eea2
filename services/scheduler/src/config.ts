import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

const int = (min: number, max: number) => (target: object, property: string) => {
  Type(() => Number)(target, property);
  IsInt()(target, property);
  Min(min)(target, property);
  Max(max)(target, property);
};

/** The scheduler service's own environment, validated once at boot. */
export class SchedulerConfig {
  /**
   * A job may be claimed and its ScheduledJobFired published up to this long before its due
   * time, so the event is already at the consumer, and the run read, when the time comes (the
   * consumer waits for due_at). Never earlier than this. 0 fires at due_at.
   *
   * 100 ms covers the event's way (commit, relay, JetStream, consumer) and the run's read even
   * when the machine is busy for a few tens of milliseconds; with 25 ms such a stall made runs
   * late (bench/README, scheduling). The price: a cancel in the last 100 ms is refused.
   */
  @int(0, 10_000)
  SCHEDULER_FIRE_LEAD_MS: number = 100;

  /**
   * How often the table is looked at regardless of the armed timer: jobs another replica
   * received, a lost wake-up, clock drift. It bounds how late such a job can fire.
   */
  @int(10, 600_000)
  SCHEDULER_SWEEP_INTERVAL_MS: number = 1000;

  /** Jobs claimed and fired per transaction; a full batch is followed by another at once. */
  @int(1, 10_000)
  SCHEDULER_BATCH_SIZE: number = 500;

  /**
   * Fired and cancelled jobs are deleted this many days after they ended. Until then a
   * redelivered ScheduleJob finds the row and changes nothing. A ScheduleJob comes again only
   * while it is unacknowledged in the work queue or unmarked in the invocation service's outbox
   * (minutes, not weeks), and a job made again that late would start nothing: the invocation
   * service starts only a run waiting for that very job.
   */
  @int(1, 3650)
  SCHEDULER_RETENTION_DAYS: number = 30;

  /** How often ended jobs past SCHEDULER_RETENTION_DAYS are deleted (and once at start). */
  @int(100, 86_400_000)
  SCHEDULER_PRUNE_INTERVAL_MS: number = 3_600_000;
}
