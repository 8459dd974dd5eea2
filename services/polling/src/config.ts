import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsCidrList } from '@runline/runtime';

const int = (min: number, max: number) => (target: object, property: string) => {
  Type(() => Number)(target, property);
  IsInt()(target, property);
  Min(min)(target, property);
  Max(max)(target, property);
};

/** The polling service's own environment, validated once at boot. */
export class PollingConfig {
  /** Opens sealed auth headers and seals polled items; the same key as every other service. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /**
   * Due polls are claimed up to this long before their due time and then started by a local
   * timer at the due time, so one claim transaction serves every poll due in that window.
   */
  @int(0, 10_000)
  POLLING_CLAIM_LEAD_MS: number = 200;

  /** How often the table is looked at regardless of the armed timer (other replicas, lost wake-ups). */
  @int(10, 600_000)
  POLLING_SWEEP_INTERVAL_MS: number = 1000;

  /**
   * A finished poll's outcome waits up to this long for others to share its transaction: at
   * 1,000 polls a second that is one write every 50 ms instead of one per poll. The trigger
   * stays leased meanwhile; intervals are at least 1 s, so its next poll is never held up.
   */
  @int(0, 500)
  POLLING_WRITE_BATCH_MS: number = 50;

  /**
   * A poll reads its project's state (master switch, deletion) after it came due; that read is
   * made at most once this often, for every poll that came due since (one query). A poll waits
   * for it only when the last read went out less than this long before. 0: polls due in the same
   * turn of the event loop share it.
   */
  @int(0, 100)
  POLLING_STATE_READ_WINDOW_MS: number = 5;

  /** Triggers claimed per transaction; a full batch is followed by another at once. */
  @int(1, 10_000)
  POLLING_BATCH_SIZE: number = 1000;

  /** Cap on one poll request, connect to last byte. */
  @int(100, 120_000)
  POLLING_REQUEST_TIMEOUT_MS: number = 10_000;

  /** Cap on a poll response body. */
  @int(1024, 64 * 1024 * 1024)
  POLLING_MAX_RESPONSE_BYTES: number = 1024 * 1024;

  /**
   * A claimed trigger belongs to its replica this long (renewed while its items run). When a
   * replica dies mid-poll, the trigger is polled again for the same due time after this.
   */
  @int(1000, 3_600_000)
  POLLING_LEASE_MS: number = 120_000;

  /** Deadline of one item's sync run request to the invocation service. */
  @int(100, 600_000)
  POLLING_RUN_REQUEST_TIMEOUT_MS: number = 45_000;

  /** Deadline of other requests to the invocation service. */
  @int(100, 120_000)
  SERVICE_REQUEST_TIMEOUT_MS: number = 10_000;

  /** Address ranges poll endpoints may use although they are not public (development, tests). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;
}
