import { Controller, Inject, type OnApplicationShutdown } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { redeliveryDelay, type BusContext, type DeliveredMessage } from '@runline/bus';
import { EVENT_TYPES, INVOCATION_COMMAND_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { Gauge, type Registry } from 'prom-client';
import { LOGGER, METRICS_REGISTRY } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { FairStarts } from '../runs/fair-starts.js';
import { RunSlots } from '../runs/run-slots.js';
import { RunStarter } from '../runs/run-starter.js';

/** Start commands taken beyond the run slots, so the next claims are ready when a slot frees. */
export const START_INTAKE_MARGIN = 8;
/**
 * Commands being put into the fair start queue at once: many, so the work queue empties into
 * PostgreSQL in a few large statements and a run of another project is never long behind a
 * backlog on the bus. Each holds a message and a few ids in memory until its batch commits.
 */
export const QUEUEING_AT_ONCE = 512;

/**
 * Takes RunInvocation commands off the work queue and starts the QUEUED run (see RunStarter).
 * A command for a run that is no longer QUEUED, or waits for a retry's time, is acknowledged
 * and ignored.
 *
 * Several commands are started at once, so one start's round trips do not hold up the next
 * (one at a time, the service ran about a third of the runs it could). They are bounded: a
 * command is taken off the bus only while fewer than RUN_CONCURRENCY + START_INTAKE_MARGIN
 * starts are in progress here, so a backlog never waits in this process's memory. Once the
 * run slots are taken, arriving runs go to the fair start queue in PostgreSQL (FairStarts), so
 * a backlog of one project does not hold up another's runs on the bus.
 */
@Controller()
export class RunInvocationHandler implements OnApplicationShutdown {
  private readonly intake: RunSlots;
  private readonly queueing = new RunSlots(QUEUEING_AT_ONCE);

  constructor(
    private readonly starter: RunStarter,
    private readonly fair: FairStarts,
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
    await Promise.all([this.intake.drain(), this.queueing.drain()]);
  }

  @EventPattern<string>(INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const { invocationId } = unpackPayloadAs(envelope, EVENT_TYPES.RUN_INVOCATION);
    const message = context.getMessage();
    // Returning lets the bus hand over the next command; waiting here first is the backpressure.
    if (this.fair.shouldQueue()) {
      await this.queueing.acquire();
      message.settleLater();
      this.queueing.track(this.queueAndSettle(invocationId, envelope.projectId, message));
      return;
    }
    await this.intake.acquire();
    message.settleLater();
    this.intake.track(this.startAndSettle(invocationId, message));
  }

  /** Acknowledged once the run is in the fair start queue; redelivered after a back-off when it could not be written. */
  private async queueAndSettle(invocationId: string, projectId: string, message: DeliveredMessage): Promise<void> {
    try {
      await this.fair.queue(invocationId, projectId);
    } catch (error) {
      this.logger.warn({ err: error, invocationId, delivery: message.deliveryCount }, 'run could not be queued; the command is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
      return;
    }
    await message.ack().catch((error: unknown) => this.logger.warn({ err: error, invocationId }, 'could not acknowledge a queued start command; its redelivery finds the run queued or started'));
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
