import { Controller, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { setTimeout as sleep } from 'node:timers/promises';
import { BusNoRespondersError } from '@runline/bus';
import { createLogger } from '@runline/observability';
import { startTestSystem, type TestSystem } from '@runline/testing';
import type { ServiceDefinition } from './service-definition.js';
import { migrateServices, startService, type RunningService } from './start-service.js';

const SUBJECT = 'startup.ready';

/** A provider whose state exists only once its init hook has run, and an init that waits for the test. */
let releaseInit: () => void = () => undefined;
@Injectable()
class SlowToInit implements OnModuleInit {
  state: { ready: true } | undefined;

  async onModuleInit(): Promise<void> {
    await new Promise<void>((resolve) => (releaseInit = resolve));
    this.state = { ready: true };
  }
}

@Controller()
class ReadyController {
  constructor(private readonly provider: SlowToInit) {}

  @MessagePattern(SUBJECT)
  answer(): Uint8Array {
    // Throws (an error reply) when a request is handled before the init hook ran.
    return new TextEncoder().encode(String(this.provider.state!.ready));
  }
}

@Module({ providers: [SlowToInit], controllers: [ReadyController] })
class StartupModule {}

const startupService: ServiceDefinition = { name: 'startup', schema: 'startup', module: StartupModule, migrations: [] };

/**
 * A replica that starts under load (a rolling restart) must not take a request before its
 * providers are initialized: the cluster suite saw a restarting invocation replica answer two
 * StartInvocation requests with "Cannot read properties of undefined" in the moment between
 * subscribing on the bus and running the init hooks.
 */
describe('startService', () => {
  let system: TestSystem;
  let running: RunningService | undefined;

  beforeAll(async () => {
    system = await startTestSystem([]);
    await migrateServices([startupService], system.database.url);
  }, 60_000);

  afterAll(async () => {
    await running?.stop();
    await system?.stop();
  });

  it('answers requests on the bus only once every provider is initialized', async () => {
    const starting = startService(startupService, {
      databaseUrl: system.database.url,
      bus: system.bus,
      httpPort: 0,
      environment: system.environment,
      logger: createLogger({ service: 'startup', level: 'silent' }),
    });
    const ask = () =>
      system.bus.request(SUBJECT, new Uint8Array(), { timeoutMs: 1_000 }).then(
        (reply) => `answered ${new TextDecoder().decode(reply)}`,
        (error: unknown) => (error instanceof BusNoRespondersError ? 'nobody listening' : `failed: ${String(error)}`),
      );
    // While the init hook waits, the service is starting: nobody may answer, nor fail to.
    const whileInitializing = new Set<string>();
    for (let n = 0; n < 20; n++) {
      whileInitializing.add(await ask());
      await sleep(25);
    }
    releaseInit();
    running = await starting;
    expect({ whileInitializing: [...whileInitializing], afterStart: await ask() }).toEqual({
      whileInitializing: ['nobody listening'],
      afterStart: 'answered true',
    });
  }, 60_000);
});
