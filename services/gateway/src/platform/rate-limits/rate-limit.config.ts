import { IsIn, IsOptional } from 'class-validator';

/** The gateway's rate-limit switch, validated once at boot with the rest of its environment. */
export class RateLimitConfig {
  /**
   * `off` serves the rate-limited endpoints without counting or X-RateLimit headers: for
   * measuring the limiter's cost (bench/rate-limits.bench.ts) or a deployment that limits in
   * front of the gateway. Default `on`.
   */
  @IsOptional()
  @IsIn(['on', 'off'], { message: 'RATE_LIMITS must be on or off' })
  RATE_LIMITS: 'on' | 'off' = 'on';
}
