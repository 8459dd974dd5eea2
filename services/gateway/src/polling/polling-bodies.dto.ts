import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import type { PollingTriggerFields } from './save-polling-trigger.handler.js';

/** Bounds of intervalMs (ours; the spec gives only the default). */
export const POLLING_INTERVAL_MIN_MS = 1000;
export const POLLING_INTERVAL_MAX_MS = 86_400_000;

const required = (field: string) => [IsDefined({ message: `${field} is required` }), IsNotEmpty({ message: `${field} is required` })];
const apply = (decorators: PropertyDecorator[]): PropertyDecorator => (target, key) => decorators.forEach((decorator) => decorator(target, key));

/** POST /flows/{projectId}/polling. Required fields first, in the spec's order. */
export class RegisterPollingBody implements PollingTriggerFields {
  @apply(required('source')) @IsString({ message: 'source must be a string' }) @MaxLength(256) source!: string;
  @apply(required('pollKey')) @IsString({ message: 'pollKey must be a string' }) @MaxLength(256) pollKey!: string;
  @apply(required('pollEndpoint')) @IsString({ message: 'pollEndpoint must be an http or https URL' }) @MaxLength(2048) pollEndpoint!: string;
  @IsOptional() @IsString({ message: 'dedupeField must be a string' }) @IsNotEmpty({ message: 'dedupeField must not be empty' }) @MaxLength(256) dedupeField?: string;
  @IsOptional() @IsString({ message: 'authHeader must be a string' }) @MaxLength(4096) authHeader?: string;
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: `intervalMs must be an integer between ${POLLING_INTERVAL_MIN_MS} and ${POLLING_INTERVAL_MAX_MS}` })
  @Min(POLLING_INTERVAL_MIN_MS, { message: `intervalMs must be an integer between ${POLLING_INTERVAL_MIN_MS} and ${POLLING_INTERVAL_MAX_MS}` })
  @Max(POLLING_INTERVAL_MAX_MS, { message: `intervalMs must be an integer between ${POLLING_INTERVAL_MIN_MS} and ${POLLING_INTERVAL_MAX_MS}` })
  intervalMs?: number;
}
