import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsCidrList } from '@runline/runtime';

const int = (min: number, max: number) => (target: object, property: string) => {
  Type(() => Number)(target, property);
  IsInt()(target, property);
  Min(min)(target, property);
  Max(max)(target, property);
};

/** The invocation service's own environment, validated once at boot. */
export class InvocationConfig {
  /** Opens sealed secrets and seals run plans; the same key as every other service. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /** Time limit of a sync run (bots, sync triggers); past it the run ends TIMEOUT. */
  @int(100, 600_000)
  SYNC_RUN_TIMEOUT_MS: number = 30_000;

  /** Time limit of one attempt of an async run. */
  @int(100, 3_600_000)
  ASYNC_RUN_TIMEOUT_MS: number = 60_000;

  /** Nodes a run segment may execute before it fails (the endless-loop guard). */
  @int(1, 100_000)
  RUN_MAX_STEPS: number = 1000;

  /** Async runs one instance executes at the same time. */
  @int(1, 1000)
  RUN_CONCURRENCY: number = 16;

  /**
   * `on`: queued runs of different projects start in a fair order once the run slots are taken
   * (runs/fair-starts.ts). `off`: first in, first out, as the work queue delivers them; for
   * comparison only (bench:fairness).
   */
  @IsIn(['on', 'off'])
  FAIR_START_ORDER: 'on' | 'off' = 'on';

  /**
   * Async runs of self-contained graphs this instance executes as their requests wait, counted
   * until their record is written; more at once are queued like any other run. 0: none.
   */
  @int(0, 100_000)
  ASYNC_INLINE_RUNS: number = 256;

  /**
   * A running run is owned by its process for this long and renewed while it runs; when a
   * process dies, its runs are ended as interrupted once their lease expires.
   */
  @int(1000, 600_000)
  RUN_LEASE_MS: number = 15_000;

  /** How often runs whose lease expired (their process died) are looked for. */
  @int(50, 60_000)
  RUN_SWEEP_INTERVAL_MS: number = 1000;

  /**
   * How long a request waits for this service's copy of a just-published definition (copies
   * arrive as gateway events, normally within milliseconds).
   */
  @int(0, 60_000)
  DEFINITION_WAIT_MS: number = 5000;

  /**
   * How long the decider's request for an approval (PATCH approve/reject) waits for a run slot
   * to resume the run at once. Past it the gateway answers 502 and the recorded decision
   * resumes the run later (its scheduler job): keep it well under the gateway's
   * SERVICE_REQUEST_TIMEOUT_MS.
   */
  @int(0, 60_000)
  APPROVAL_SLOT_WAIT_MS: number = 3000;

  /** Address ranges http nodes may call although they are not public (development, tests). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;
}
