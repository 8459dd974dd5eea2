import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

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
