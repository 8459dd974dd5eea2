import { IsBoolean, IsIn, IsInt, IsNotEmpty, IsString, IsUrl, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { ENROLLMENT_POLICIES, ON_ERROR_POLICIES, type EnrollmentPolicy, type OnErrorPolicy } from '../platform/store/project-api-settings.entity.js';

const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;

export class UpdateApiSettingsBody {
  // Absent leaves the setting as it is; null is refused (400), not stored: these settings have no "unset".
  @ValidateIf((_body, value) => value !== undefined) @IsBoolean() externalApiEnabled?: boolean;
  @ValidateIf((_body, value) => value !== undefined) @IsIn(ENROLLMENT_POLICIES) defaultEnrollmentPolicy?: EnrollmentPolicy;
  @ValidateIf((_body, value) => value !== undefined) @IsIn(ON_ERROR_POLICIES) defaultOnErrorPolicy?: OnErrorPolicy;

  /** null clears it. */
  @ValidateIf((_body, value) => value !== null && value !== undefined)
  @IsUrl({ protocols: ['https'], require_protocol: true, require_tld: false }, { message: 'defaultCallbackUrl must be an https URL' })
  @MaxLength(2048)
  defaultCallbackUrl?: string | null;

  /** Write-only; null clears it. */
  @ValidateIf((_body, value) => value !== null && value !== undefined)
  @IsString() @IsNotEmpty() @MaxLength(256)
  defaultCallbackSecret?: string | null;

  @ValidateIf((_body, value) => value !== null && value !== undefined)
  @IsInt() @Min(1) @Max(1_000_000)
  rateLimitPerMinute?: number | null;

  @ValidateIf((_body, value) => value !== null && value !== undefined)
  @IsInt() @Min(1000) @Max(MAX_WINDOW_MS)
  rateLimitWindowMs?: number | null;

  /** RUNNING runs of the project at once, every target together (DESIGN section 13); null = no limit. */
  @ValidateIf((_body, value) => value !== null && value !== undefined)
  @IsInt() @Min(1) @Max(100_000)
  maxConcurrentRuns?: number | null;
}
