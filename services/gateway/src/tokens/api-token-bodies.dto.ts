import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsISO8601, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { TOKEN_SCOPES, type TokenScope } from '../platform/store/api-token.entity.js';

const NAME_LENGTH = 200;

export class CreateApiTokenBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(NAME_LENGTH) name!: string;

  @IsDefined({ message: 'scopes is required' })
  @IsArray() @ArrayMinSize(1, { message: 'scopes must name at least one scope' }) @ArrayMaxSize(TOKEN_SCOPES.length)
  @IsIn(TOKEN_SCOPES, { each: true, message: `scopes must be drawn from: ${TOKEN_SCOPES.join(', ')}` })
  scopes!: TokenScope[];

  @IsOptional() @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;
}
