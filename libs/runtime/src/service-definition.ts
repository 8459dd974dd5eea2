import type { DynamicModule, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { MixedList } from 'typeorm';

/**
 * What a service is, as the runtime needs to know it: its name, its Postgres schema, its
 * root module and its migrations. Each service exports one of these from
 * `src/<name>.service.ts`; its own `main.ts` runs it alone, the launcher runs all seven at once.
 */
export interface ServiceDefinition {
  /** Also the durable consumer and queue group prefix on the bus. */
  name: string;
  /** The service's own schema; it never touches another. */
  schema: string;
  module: Type<unknown> | DynamicModule;
  // TypeORM's own list type: migration classes.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
  /** Adjusts the HTTP application before it listens (body limits, filters, middleware). */
  configureHttp?: (app: NestFastifyApplication) => void;
}
