import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { IsCidrList } from '@runline/runtime';

/** Development defaults, printed at start so nobody mistakes them for production values. */
export const DEVELOPMENT_CONSOLE_JWT_SECRET = 'runline-development-console-secret';
export const DEVELOPMENT_SECRETS_KEY = 'runline-development-secrets-key';

/** The environment of `npm start`: every service in one process. */
export class LauncherConfig {
  /** Unset: an embedded PostgreSQL is started, with its data under RUNLINE_DATA_DIR. */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DATABASE_URL?: string;

  /** Unset: the in-process bus. */
  @IsOptional()
  @Matches(/^(nats|tls):\/\//, { message: 'must be a nats:// URL' })
  NATS_URL?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]*$/, { message: 'may hold only letters, digits, _ and -' })
  BUS_PREFIX?: string;

  /** The gateway's port. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 3000;

  @IsString()
  HOST: string = '127.0.0.1';

  /** Embedded PostgreSQL data, demo details. Default `.runline` in the working directory. */
  @IsString()
  RUNLINE_DATA_DIR: string = '.runline';

  @IsOptional()
  @IsString()
  @MinLength(16)
  CONSOLE_JWT_SECRET?: string;

  @IsOptional()
  @IsString()
  @MinLength(16)
  SECRETS_KEY?: string;

  /** Ranges outbound requests may reach despite the guard (e.g. 127.0.0.0/8 in development). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;
}
