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

  /** How long a fire's start (and a run status query) waits for the invocation service. */
  @int(100, 60_000)
  SCHEDULER_RUN_REQUEST_TIMEOUT_MS: number = 5000;

  /**
   * A schedule fire whose start the invocation service did not confirm (no answer within
   * SCHEDULER_RUN_REQUEST_TIMEOUT_MS, or unavailable) is sent again a second later with the same
   * idempotency key, for this long after the fire was recorded; after that it is NOT_STARTED. A
   * busy moment or a restart of the invocation service, not an outage: fires missed over an
   * outage are the catch-up policy's (SCHEDULER_MISSED_FIRE_AFTER_MS).
   */
  @int(0, 3_600_000)
  SCHEDULER_FIRE_RETRY_FOR_MS: number = 60_000;

  /**
   * A schedule's fire whose due time passed longer ago than this was missed (no scheduler ran,
   * DESIGN section 12): the schedule's catch-up policy decides which of the missed fires run.
   * Well above the sweep interval, so a fire delayed by a takeover or a busy moment is a fire,
   * not a catch-up.
   */
  @int(1000, 3_600_000)
  SCHEDULER_MISSED_FIRE_AFTER_MS: number = 5000;

  /**
   * While a BUFFER_ONE fire waits, the running run's status is asked again this often; the run's
   * end event is the fast path, this the backstop for an event that came before the fire was
   * recorded.
   */
  @int(100, 600_000)
  SCHEDULER_BUFFER_RECHECK_MS: number = 1000;

  /** Schedule fires are kept this many days (the fire's row is what makes it start at most one run). */
  @int(1, 3650)
  SCHEDULER_FIRE_RETENTION_DAYS: number = 7;

  /**
   * Batches of fires whose runs are being started at once. A batch holds its schedule rows (and
   * a database connection) from its claim until its runs are recorded, up to SCHEDULER_FIRE_LEAD_MS
   * plus the invocation service's answer.
   */
  @int(1, 8)
  SCHEDULER_FIRE_BATCHES_IN_FLIGHT: number = 4;
}
