// class-transformer's @Type reads decorator metadata; Nest loads this too, but config is read before Nest.
import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import { IsInt, Matches, Max, Min, registerDecorator, validateSync, type ValidationOptions } from 'class-validator';
import ipaddr from 'ipaddr.js';

/** A bad environment: the message names every variable that is wrong, so boot fails fast. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates a config class from environment variables, once, at boot. Property
 * names are the variable names (`DATABASE_URL`); decorate them with class-validator rules and
 * class-transformer `@Type` for numbers.
 */
export function loadConfig<T extends object>(ConfigClass: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const config = plainToInstance(ConfigClass, defined, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new ConfigError(
      errors.map((error) => `${error.property}: ${Object.values(error.constraints ?? {}).join(', ') || 'invalid'}`),
    );
  }
  return config;
}

/**
 * A comma-separated list of CIDR ranges (`127.0.0.0/8,::1/128`), or empty. Used for
 * OUTBOUND_ALLOWED_CIDRS, so a typo fails at boot instead of silently allowing nothing.
 */
export function IsCidrList(validationOptions?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isCidrList',
      target: target.constructor,
      propertyName,
      options: { message: `${propertyName} must be a comma-separated list of CIDR ranges such as 127.0.0.0/8`, ...validationOptions },
      validator: { validate: (value: unknown) => typeof value === 'string' && parseCidrList(value) !== undefined },
    });
}

/** The ranges of a CIDR list, or undefined when any entry is not a CIDR range. */
export function parseCidrList(value: string): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> | undefined {
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (!entries.every((entry) => ipaddr.isValidCIDR(entry))) return undefined;
  return entries.map((entry) => ipaddr.parseCIDR(entry));
}

type PropertyDecoratorFn = (target: object, propertyName: string) => void;
const all =
  (...decorators: PropertyDecoratorFn[]): PropertyDecoratorFn =>
  (target, propertyName) => {
    for (const decorator of decorators) decorator(target, propertyName);
  };

/** The rules every entry point shares for the infrastructure variables. */
export const IsPostgresUrl = () => Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' });
/** One `nats://` or `tls://` URL, or several comma-separated (the nodes of a cluster). */
export const IsNatsUrl = () =>
  Matches(/^\s*(nats|tls):\/\/[^,\s]+\s*(,\s*(nats|tls):\/\/[^,\s]+\s*)*$/, {
    message: 'must be a nats:// URL or a comma-separated list of them',
  });
export const IsBusPrefix = () => Matches(/^[A-Za-z0-9_-]*$/, { message: 'may hold only letters, digits, _ and -' });
export const IsPort = () => all(Type(() => Number), IsInt(), Min(0), Max(65535));
/** BUS_STREAM_REPLICAS: replicas of every JetStream stream, 1 to 5 (a JetStream limit). */
export const IsStreamReplicas = () => all(Type(() => Number), IsInt(), Min(1), Max(5));
