import { IsDefined, IsIn, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { MEMBER_ROLES, type MemberRole } from '../platform/store/membership.entity.js';

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
