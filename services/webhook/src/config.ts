import { Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { DEFAULT_SHOPIFY_API_VERSION } from './providers/shopify/shopify.adapter.js';

/** The webhook service's own environment, validated once at boot. */
export class WebhookConfig {
  /** Seals hook secrets at rest and the bodies of rejected deliveries; the same key as every other service. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /** How far X-Runline-Timestamp may be from now, in seconds (DESIGN section 9: 300). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3600)
  WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS: number = 300;

  /** A hook's deliveries accepted per minute when its creator set no limit. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  WEBHOOK_DEFAULT_RATE_LIMIT_PER_MINUTE: number = 600;

  /** How often delivery ids older than the 24-hour dedupe window are deleted. */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  WEBHOOK_DELIVERY_PRUNE_INTERVAL_MS: number = 3_600_000;

  /** The Shopify Admin API version subscriptions are made with (`YYYY-MM` of a quarterly release). */
  @Matches(/^(?:\d{4}-(?:01|04|07|10)|unstable)$/)
  SHOPIFY_API_VERSION: string = DEFAULT_SHOPIFY_API_VERSION;
}
