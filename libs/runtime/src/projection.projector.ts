import { Controller, Inject, type Type } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { Envelope } from '@runline/contracts';

/** A service's projection of events into its own tables: applies each event once, however often it arrives. */
export interface Projection {
  apply(envelope: Envelope): Promise<unknown>;
}

/**
 * The Nest controller that feeds `projection` from the bus: one durable subscription per
 * subject of `subjects`, named as `@EventPattern(subject)` names it (`busDurableName`), so the
 * consumers of a projector written by hand carry on. Each delivery goes to `projection.apply`:
 * acked when it returns, redelivered when it throws. A service gives it its name by extending it:
 * `export class CopiesProjector extends projectorOf(Copies, [SUBJECT_A, SUBJECT_B]) {}`.
 */
export function projectorOf(projection: Type<Projection>, subjects: readonly string[]): Type<object> {
  @Controller()
  class Projector {
    constructor(@Inject(projection) private readonly target: Projection) {}

    @EventPattern([...subjects])
    async project(@Payload() envelope: Envelope): Promise<void> {
      await this.target.apply(envelope);
    }
  }
  return Projector;
}
