import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';
import { IsCidrList } from '@runline/runtime';
import { DEFAULT_SHOPIFY_API_VERSION, SHOPIFY_API_VERSION_PATTERN } from './providers/shopify/shopify.adapter.js';

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

  /** Address ranges provider calls may reach although they are not public (development, tests with local fakes). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;

  /** Stripe's API (https://docs.stripe.com/api); a local fake in tests. */
  @IsUrl({ require_tld: false, protocols: ['https', 'http'], require_protocol: true })
  STRIPE_API_URL: string = 'https://api.stripe.com';

  /** GitHub's REST API (https://docs.github.com/rest); GitHub Enterprise Server has its own. */
  @IsUrl({ require_tld: false, protocols: ['https', 'http'], require_protocol: true })
  GITHUB_API_URL: string = 'https://api.github.com';

  /** The Shopify Admin API version subscriptions are made with (`YYYY-MM` of a quarterly release). */
  @Matches(SHOPIFY_API_VERSION_PATTERN)
  SHOPIFY_API_VERSION: string = DEFAULT_SHOPIFY_API_VERSION;

  /** Time limit of one call to a provider's API, in ms. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(120_000)
  WEBHOOK_PROVIDER_TIMEOUT_MS: number = 10_000;

  /** Tries of one provider call at most when it answers 429 or 5xx (or does not answer). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10)
  WEBHOOK_PROVIDER_MAX_ATTEMPTS: number = 3;

  /** Wait before the second try when the provider sent no Retry-After; doubled for each further one. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60_000)
  WEBHOOK_PROVIDER_BACKOFF_MS: number = 500;
}

/** The list of OUTBOUND_ALLOWED_CIDRS, for the outbound guard. */
export function allowedCidrs(config: WebhookConfig): string[] {
  return (config.OUTBOUND_ALLOWED_CIDRS ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
}
