import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';

/** The dead-letter service's own environment, validated once at boot. */
export class DeadLetterConfig {
  /** Opens sealed payloads for display and replay; the same key as every other service. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /** Deadline of a replay's sync run request to the invocation service. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(600_000)
  DEAD_LETTER_REPLAY_TIMEOUT_MS: number = 45_000;

  /** How often replays cut off between claim and outcome (a crash) are looked for and finished. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS: number = 60_000;

  /** At most this many events are replayed by one bulk replay request; the rest wait for the next. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  DEAD_LETTER_BULK_REPLAY_MAX_EVENTS: number = 100;

  /** Replays one bulk replay request runs at once (each is a sync run in the invocation service). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(64)
  DEAD_LETTER_BULK_REPLAY_CONCURRENCY: number = 4;
}
