import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';

/** The gateway's own environment, validated once at boot. */
export class GatewayConfig {
  /** HS256 key for console JWTs. One of this or CONSOLE_JWT_PUBLIC_KEY is required. */
  @ValidateIf((config: GatewayConfig) => !config.CONSOLE_JWT_PUBLIC_KEY)
  @IsString({ message: 'CONSOLE_JWT_SECRET or CONSOLE_JWT_PUBLIC_KEY must be set' })
  @MinLength(16)
  CONSOLE_JWT_SECRET?: string;

  /** PEM public key for RS256 / ES256 console JWTs issued elsewhere. */
  @IsOptional()
  @Matches(/-----BEGIN PUBLIC KEY-----/, { message: 'must be a PEM public key' })
  CONSOLE_JWT_PUBLIC_KEY?: string;

  /**
   * Seals callback secrets at rest and opens inbound hooks' secrets to verify their deliveries;
   * every service that seals or opens them needs the same key.
   */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /**
   * The API's public address (`https://api.example.com`, no path), used in the console's request
   * examples. Unset: the address the console request came in on (its Host header, plain http),
   * which is right when clients reach the gateway directly; set it behind a proxy or TLS terminator.
   */
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: 'PUBLIC_API_URL must be an http(s) URL' })
  @Matches(/^https?:\/\/[^/]+\/?$/, { message: 'PUBLIC_API_URL must be a scheme and host (and port), without a path' })
  PUBLIC_API_URL?: string;

  /** Tokens look like `<API_TOKEN_PREFIX>_ext_…`. */
  @IsOptional()
  @Matches(/^[a-z][a-z0-9]{0,15}$/, { message: 'must be 1-16 lowercase letters and digits' })
  API_TOKEN_PREFIX: string = 'rl';

  /**
   * Where clients reach the gateway from outside (scheme, host, optional port and path prefix,
   * no trailing slash): the base of an inbound hook's `url`. Unset: the address each console
   * request came to.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*[^\s?#/])?$/, { message: 'must be an http(s) URL without a trailing slash, query or fragment' })
  PUBLIC_BASE_URL?: string;

  /** Larger request bodies are refused with 413. */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  MAX_BODY_BYTES: number = 1024 * 1024;

  /**
   * How long a gateway keeps a token, project or inbound hook in memory. Every use checks the
   * project's config version, so a change answered by any replica applies to the next request;
   * this bounds memory. 0 turns the cache off.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  ACCESS_CACHE_TTL_MS: number = 2000;

  /** Deadline of a request/reply call from the gateway to another service. */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(120_000)
  SERVICE_REQUEST_TIMEOUT_MS: number = 10_000;

  /**
   * How long the webhook service may spend on a provider's API (retries included) for one
   * create, retry or revoke of a managed subscription; the gateway waits 5 s more for its answer.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(115_000)
  WEBHOOK_PROVIDER_BUDGET_MS: number = 25_000;

  /**
   * How long a change (settings, publish, revocation, plan, deletion) waits for the services
   * that keep copies to store it before it is answered; past it the answer is 503 and the
   * change still reaches them through JetStream.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(120_000)
  CHANGE_PROPAGATION_TIMEOUT_MS: number = 5000;

  /**
   * Deadline of a sync run request (bot message, sync triggers). Longer than the invocation
   * service's SYNC_RUN_TIMEOUT_MS plus its wait for a just-published definition, so a run that
   * times out is answered by the run itself (status TIMEOUT), not by this deadline.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(900_000)
  SYNC_REQUEST_TIMEOUT_MS: number = 40_000;

  /**
   * How often an open event stream (GET …/events) gets a `: ping` comment, so proxies and
   * clients see a live connection when nothing happens (DESIGN section 14: 15 s).
   */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(300_000)
  RUN_STREAM_PING_MS: number = 15_000;
}
