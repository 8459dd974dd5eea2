import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { BUS, type Bus } from '@runline/bus';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { HealthController } from './health.controller.js';
import { ENVIRONMENT, LOGGER, METRICS_REGISTRY, SERVICE_NAME } from './tokens.js';

export interface RuntimeResources {
  service: string;
  dataSource: DataSource;
  bus: Bus;
  transactions: TransactionRunner;
  logger: Logger;
  registry: Registry;
  environment: NodeJS.ProcessEnv;
}

/**
 * Hands the infrastructure a service runs on (its database, the bus, the outbox-backed
 * transaction runner, logging and metrics) to the service's own module, and serves
 * `/health/*` and `/metrics`. The runtime creates these resources; Nest only distributes them.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forService(resources: RuntimeResources): DynamicModule {
    const providers = [
      { provide: SERVICE_NAME, useValue: resources.service },
      { provide: DataSource, useValue: resources.dataSource },
      { provide: BUS, useValue: resources.bus },
      { provide: TransactionRunner, useValue: resources.transactions },
      { provide: LOGGER, useValue: resources.logger },
      { provide: METRICS_REGISTRY, useValue: resources.registry },
      { provide: ENVIRONMENT, useValue: resources.environment },
    ];
    return {
      module: RuntimeModule,
      imports: [TerminusModule],
      controllers: [HealthController],
      providers,
      exports: providers.map((provider) => provider.provide),
    };
  }
}
