import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { TOKEN_SCOPES, type TokenScope } from '../../entities/api-token.entity.js';
import { MEMBER_ROLES, type MemberRole } from '../../entities/membership.entity.js';
import { ENROLLMENT_POLICIES, ON_ERROR_POLICIES, type EnrollmentPolicy, type OnErrorPolicy } from '../../entities/project-api-settings.entity.js';
import { PROJECT_TYPES, type ProjectType } from '../../entities/project.entity.js';

const NAME_LENGTH = 200;
const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;

export class CreateOrganizationBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) name!: string;
}

/** Every field is required; null means "not limited by the plan" (unlimited quota, no renewal day). */
export class SetPlanBody {
  @ValidateIf((_body, value) => value !== null)
  @IsDefined({ message: 'monthlyQuota is required (an integer, or null for unlimited)' })
  @IsInt() @Min(0)
  monthlyQuota!: number | null;

  @ValidateIf((_body, value) => value !== null)
  @IsDefined({ message: 'rateLimitPerMinute is required (an integer, or null for the platform default)' })
  @IsInt() @Min(1) @Max(1_000_000)
  rateLimitPerMinute!: number | null;

  @ValidateIf((_body, value) => value !== null)
  @IsDefined({ message: 'rateLimitWindowMs is required (an integer, or null for the platform default)' })
  @IsInt() @Min(1000) @Max(MAX_WINDOW_MS)
  rateLimitWindowMs!: number | null;

  @ValidateIf((_body, value) => value !== null)
  @IsDefined({ message: 'renewalDay is required (1-28, or null for the first day of the month)' })
  @IsInt() @Min(1) @Max(28)
  renewalDay!: number | null;
}

export class AddMemberBody {
  @IsDefined({ message: 'userId is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) userId!: string;
  @IsDefined({ message: 'role is required' })
  @IsIn(MEMBER_ROLES, { message: `role must be one of: ${MEMBER_ROLES.join(', ')}` })
  role!: MemberRole;
}

export class CreateProjectBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) name!: string;
  @IsDefined({ message: 'type is required' })
  @IsIn(PROJECT_TYPES, { message: `type must be one of: ${PROJECT_TYPES.join(', ')}` })
  type!: ProjectType;
}

export class SaveDefinitionBody {
  @IsDefined({ message: 'definition is required' }) @IsObject() definition!: Record<string, unknown>;
}

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
}

export class CreateApiTokenBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) name!: string;

  @IsDefined({ message: 'scopes is required' })
  @IsArray() @ArrayMinSize(1, { message: 'scopes must name at least one scope' }) @ArrayMaxSize(TOKEN_SCOPES.length)
  @IsIn(TOKEN_SCOPES, { each: true, message: `scopes must be drawn from: ${TOKEN_SCOPES.join(', ')}` })
  scopes!: TokenScope[];

  @IsOptional() @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;
}
