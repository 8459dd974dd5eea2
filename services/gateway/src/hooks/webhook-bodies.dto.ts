import { IsDefined, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

/** `POST …/webhooks`. `rateLimitPerMinute` is ours (DESIGN gives the default, 600, only). */
export class CreateWebhookBody {
  @IsDefined({ message: 'name is required' }) @IsString() @IsNotEmpty() @MaxLength(200) name!: string;

  @IsOptional()
  @IsString({ message: 'secret must be a string' })
  @MinLength(16, { message: 'secret must be 16 to 256 characters' })
  @MaxLength(256, { message: 'secret must be 16 to 256 characters' })
  secret?: string;

  @IsOptional()
  @IsInt({ message: 'rateLimitPerMinute must be an integer from 1 to 100000' })
  @Min(1, { message: 'rateLimitPerMinute must be an integer from 1 to 100000' })
  @Max(100_000, { message: 'rateLimitPerMinute must be an integer from 1 to 100000' })
  rateLimitPerMinute?: number;
}
