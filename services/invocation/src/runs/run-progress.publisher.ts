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
  /**
   * The sequence of the segment's Started or Resumed; a promise of it when it is being read (a
   * run claimed where the sequence is not returned): items said meanwhile wait for it, and are
   * dropped if it cannot be had (null), as live items may be.
   */
  sequence: number | Promise<number | null>;
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
    type Item = { case: 'stepJson' | 'messageText'; value: string };
    let index = 0;
    let afterSequence: bigint | null = typeof run.sequence === 'number' ? BigInt(run.sequence) : null;
    /** Items said before the sequence is known, in order. */
    let waiting: Item[] | null = afterSequence === null ? [] : null;
    const send = (item: Item) => {
      try {
        const progress = create(RunProgressSchema, { orgId: run.orgId, projectId: run.projectId, invocationId: run.id, afterSequence: afterSequence!, index: ++index, item });
        this.bus.publishLive(INVOCATION_LIVE_SUBJECTS.RUN_PROGRESS, toBinary(RunProgressSchema, progress));
      } catch {
        // Live only: a closed bus loses the item, which the segment's record still holds.
      }
    };
    if (typeof run.sequence !== 'number') {
      void run.sequence.then(
        (sequence) => {
          const said = waiting ?? [];
          waiting = null;
          if (sequence === null) return;
          afterSequence = BigInt(sequence);
          for (const item of said) send(item);
        },
        () => (waiting = null),
      );
    }
    const publish = (item: Item) => {
      if (waiting) waiting.push(item);
      else if (afterSequence !== null) send(item);
    };
    return (step: StepRecord, messages: readonly string[]) => {
      // As the fold pairs them: a message, then the step of the node that said it.
      for (const text of messages) publish({ case: 'messageText', value: redactSecrets(text) });
      publish({ case: 'stepJson', value: JSON.stringify(redactSecrets(step)) });
    };
  }
}
