import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { BusContext } from '@runline/bus';
import { EVENT_TYPES, INVOCATION_COMMAND_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { RunStarter } from '../runs/run-starter.js';

/**
 * Takes RunInvocation commands off the work queue and starts the QUEUED run (see RunStarter).
 * A command for a run that is no longer QUEUED, or waits for a retry's time, is acknowledged
 * and ignored.
 */
@Controller()
export class RunInvocationHandler {
  constructor(private readonly starter: RunStarter) {}

  @EventPattern<string>(INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const { invocationId } = unpackPayloadAs(envelope, EVENT_TYPES.RUN_INVOCATION);
    await this.starter.start(invocationId, { status: 'QUEUED', dispatched: true }, () => context.getMessage().ack());
  }
}
