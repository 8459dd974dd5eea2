import { Controller, Inject, type OnApplicationShutdown } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { redeliveryDelay, type BusContext, type DeliveredMessage } from '@runline/bus';
import { EVENT_TYPES, INVOCATION_COMMAND_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { Gauge, type Registry } from 'prom-client';
import { LOGGER, METRICS_REGISTRY } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { RunSlots } from '../runs/run-slots.js';
import { RunStarter } from '../runs/run-starter.js';

/** Start commands taken beyond the run slots, so the next claims are ready when a slot frees. */
export const START_INTAKE_MARGIN = 8;

/**
 * Takes RunInvocation commands off the work queue and starts the QUEUED run (see RunStarter).
 * A command for a run that is no longer QUEUED, or waits for a retry's time, is acknowledged
 * and ignored.
 *
 * Several commands are started at once, so one start's round trips do not hold up the next
 * (one at a time, the service ran about a third of the runs it could). They are bounded: a
 * command is taken off the bus only while fewer than RUN_CONCURRENCY + START_INTAKE_MARGIN
 * starts are in progress here, so a backlog waits on the bus (JetStream's stream, pulled in
 * small batches), never in this process's memory.
 */
@Controller()
export class RunInvocationHandler implements OnApplicationShutdown {
  private readonly intake: RunSlots;

  constructor(
    private readonly starter: RunStarter,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    const intake = new RunSlots(config.RUN_CONCURRENCY + START_INTAKE_MARGIN);
    this.intake = intake;
    new Gauge({
      name: 'runline_invocation_start_commands_in_progress',
      help: 'Start commands taken off the bus and not yet settled (at most RUN_CONCURRENCY + 8; the rest wait on the bus).',
      registers: [registry],
      collect() {
        this.set(intake.held);
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.intake.drain();
  }

  @EventPattern<string>(INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const { invocationId } = unpackPayloadAs(envelope, EVENT_TYPES.RUN_INVOCATION);
    const message = context.getMessage();
    // Returning lets the bus hand over the next command; waiting here first is the backpressure.
    await this.intake.acquire();
    message.settleLater();
    this.intake.track(this.startAndSettle(invocationId, message));
  }

  /** Acknowledged once claimed (by the starter) or found no longer waiting; redelivered after a back-off on a failure. */
  private async startAndSettle(invocationId: string, message: DeliveredMessage): Promise<void> {
    try {
      await this.starter.start(invocationId, { status: 'QUEUED', dispatched: true }, () => message.ack());
    } catch (error) {
      this.logger.warn({ err: error, invocationId, delivery: message.deliveryCount }, 'run could not be started; the command is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
      return;
    }
    // Not claimed (no longer waiting): done. Claimed: the starter acknowledged it already, and this is a no-op.
    await message.ack().catch((error: unknown) => this.logger.warn({ err: error, invocationId }, 'could not acknowledge a start command; its redelivery will be ignored'));
  }
}
