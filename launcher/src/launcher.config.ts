import { IsIn, IsOptional, IsString, MinLength } from 'class-validator';
import type { LevelWithSilent } from 'pino';
import { IsBusPrefix, IsCidrList, IsNatsUrl, IsPort, IsPostgresUrl, IsStreamReplicas } from '@runline/runtime';

/** Development defaults, printed at start so nobody mistakes them for production values. */
export const DEVELOPMENT_CONSOLE_JWT_SECRET = 'runline-development-console-secret';
export const DEVELOPMENT_SECRETS_KEY = 'runline-development-secrets-key';

/** The environment of `npm start`: every service in one process. */
export class LauncherConfig {
  /** Unset: an embedded PostgreSQL is started, with its data under RUNLINE_DATA_DIR. */
  @IsOptional()
  @IsPostgresUrl()
  DATABASE_URL?: string;

  /** Unset: the in-process bus. One server, or the nodes of a cluster comma-separated. */
  @IsOptional()
  @IsNatsUrl()
  NATS_URL?: string;

  @IsOptional()
  @IsBusPrefix()
  BUS_PREFIX?: string;

  /** Replicas of every JetStream stream (NATS mode only). */
  @IsStreamReplicas()
  BUS_STREAM_REPLICAS: number = 1;

  /** The gateway's port. */
  @IsPort()
  PORT: number = 3000;

  @IsString()
  HOST: string = '127.0.0.1';

  /** Embedded PostgreSQL data, the demo's details and `demo.env`, the log file. Default `.runline` in the working directory. */
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

  /**
   * Unset: every line at `info` goes to `runline.log` in RUNLINE_DATA_DIR and the terminal shows
   * warnings and errors only. Set: that level, on both.
   */
  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: LevelWithSilent;
}
