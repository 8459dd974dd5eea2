import { Controller, Inject, type OnApplicationShutdown } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { BusContext } from '@runline/bus';
import { EVENT_TYPES, INVOCATION_COMMAND_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { DefinitionCatalog } from '../runs/definition-catalog.js';
import { readInvocation, transition } from '../runs/invocation-store.js';
import { RunExecutor } from '../runs/run-executor.js';
import type { RunPlan } from '../runs/run-plan.js';
import { RunSlots } from '../runs/run-slots.js';

/**
 * Takes RunInvocation commands off the work queue. Claiming (QUEUED → RUNNING under this
 * process's lease) is one transaction; the command is acknowledged right after it, and the run
 * executes in one of RUN_CONCURRENCY slots. A command for a run that is no longer QUEUED is
 * acknowledged and ignored, so a redelivered command never starts a run twice; a run whose
 * process dies is ended by the sweeper when its lease expires.
 */
@Controller()
export class RunInvocationHandler implements OnApplicationShutdown {
  private readonly slots: RunSlots;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly catalog: DefinitionCatalog,
    private readonly executor: RunExecutor,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.slots = new RunSlots(config.RUN_CONCURRENCY);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.slots.drain();
  }

  @EventPattern<string>(INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const { invocationId } = unpackPayloadAs(envelope, EVENT_TYPES.RUN_INVOCATION);
    await this.slots.acquire();
    let handedOver = false;
    try {
      const row = await readInvocation(this.transactions.dataSource.manager, invocationId);
      if (!row || row.status !== 'QUEUED') return;
      const plan = JSON.parse(this.secrets.open(row.sealedPlan)) as RunPlan;
      const project = await this.catalog.project(row.projectId);
      if (project && !project.externalApiEnabled) {
        await this.transactions.run((tx) =>
          transition(tx, row.id, { status: 'QUEUED', dispatched: true }, { status: 'FAILED' }, [
            {
              type: 'InvocationFailed',
              errorMessage: 'External API access is disabled for this project',
              kind: 'EXTERNAL_API_DISABLED',
              attempt: row.attempt,
              steps: [],
              trace: null,
              durationMs: 0,
            },
          ]),
        );
        return;
      }
      const attempt = row.attempt + 1;
      const lease = this.executor.lease();
      const claimed = await this.transactions.run((tx) =>
        transition(tx, row.id, { status: 'QUEUED', dispatched: true }, { status: 'RUNNING', attempt, lease }, [
          { type: 'InvocationStarted', attempt },
        ]),
      );
      if (!claimed) return;
      await context.getMessage().ack();
      handedOver = true;
      this.slots.track(
        this.executor.execute({ ...row, status: 'RUNNING', attempt }, plan, null).catch((error: unknown) => {
          this.logger.error({ err: error, invocationId }, 'async run could not be recorded; its lease will expire and end it');
        }),
      );
    } finally {
      if (!handedOver) this.slots.release();
    }
  }
}
