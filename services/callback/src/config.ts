import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsCidrList } from '@runline/runtime';
import { ACK_WINDOW_MS } from './deliveries/delivery-rules.js';

const int = (min: number, max: number) => (target: object, property: string) => {
  Type(() => Number)(target, property);
  IsInt()(target, property);
  Min(min)(target, property);
  Max(max)(target, property);
};

/**
 * The callback service's own environment, validated once at boot. The delivery rules (attempts,
 * waits between them, acknowledgement window) are not configurable: `deliveries/delivery-rules.ts`.
 */
export class CallbackConfig {
  /** Opens the sealed callback secrets; the same key as every other service. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /** Address ranges callbacks may reach although they are not public (development, tests). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;

  /**
   * How long a replica owns a delivery it is attempting. If it dies mid-attempt, another
   * replica (or itself after a restart) repeats that attempt once this has passed. Must exceed
   * the acknowledgement window by at least a second.
   */
  @int(ACK_WINDOW_MS + 1_000, 600_000)
  CALLBACK_LEASE_MS: number = 30_000;

  /** How often the table is looked at for due attempts this process has no timer for. */
  @int(50, 60_000)
  CALLBACK_SWEEP_INTERVAL_MS: number = 1000;

  /** Attempts one replica has in flight at once; further ones wait their turn. */
  @int(1, 10_000)
  CALLBACK_CONCURRENCY: number = 512;

  /**
   * Connections to one receiver (scheme, host and port) at once, and so attempts to it in
   * flight: the others wait here, before their acknowledgement window starts, never in the
   * connection pool's queue while it runs (a receiver answering each callback in 2 s would
   * otherwise time out on requests it never got once more were in flight than connections).
   */
  @int(1, 1_000)
  CALLBACK_CONNECTIONS_PER_RECEIVER: number = 64;

  /** Bytes of a receiver's answer read at most; a longer answer fails the attempt. */
  @int(1024, 10 * 1024 * 1024)
  CALLBACK_MAX_RESPONSE_BYTES: number = 64 * 1024;
}

/** The list of OUTBOUND_ALLOWED_CIDRS, for the outbound guard. */
export function allowedCidrs(config: CallbackConfig): string[] {
  return (config.OUTBOUND_ALLOWED_CIDRS ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
}

