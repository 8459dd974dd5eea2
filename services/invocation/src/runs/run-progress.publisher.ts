import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import { create, INVOCATION_LIVE_SUBJECTS, RunProgressSchema, toBinary } from '@runline/contracts';
import type { RunPorts, StepRecord } from '@runline/engine';
import { redactSecrets } from '@runline/observability';

/** The run a segment's progress belongs to, at the sequence of its last recorded event. */
export interface ProgressOwner {
  id: string;
  orgId: string;
  projectId: string;
  sequence: number;
}

/**
 * Says a running run's steps and messages as they happen (DESIGN section 14): each as one
 * RunProgress on core NATS, live only (no outbox, no JetStream, no acknowledgement), for the
 * gateways' run streams. What it says is recorded anyway with the event that ends the segment,
 * so a stream that misses some reads them there; the numbering (`index`) is the one the
 * gateway's fold gives them from that record: a message right before the step of its node.
 */
@Injectable()
export class RunProgressPublisher {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  /** The engine's `onStep` port for one segment of `run`. */
  reporterFor(run: ProgressOwner): NonNullable<RunPorts['onStep']> {
    let index = 0;
    const base = { orgId: run.orgId, projectId: run.projectId, invocationId: run.id, afterSequence: BigInt(run.sequence) };
    const publish = (item: { case: 'stepJson' | 'messageText'; value: string }) => {
      try {
        this.bus.publishLive(INVOCATION_LIVE_SUBJECTS.RUN_PROGRESS, toBinary(RunProgressSchema, create(RunProgressSchema, { ...base, index: ++index, item })));
      } catch {
        // Live only: a closed bus loses the item, which the segment's record still holds.
      }
    };
    return (step: StepRecord, messages: readonly string[]) => {
      // As the fold pairs them: a message, then the step of the node that said it.
      for (const text of messages) publish({ case: 'messageText', value: redactSecrets(text) });
      publish({ case: 'stepJson', value: JSON.stringify(redactSecrets(step)) });
    };
  }
}
