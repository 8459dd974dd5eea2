import { randomUUID } from 'node:crypto';
import { Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { busDurableName, BusServer, InProcessBus } from '@runline/bus';
import {
  ApiTokenRevokedSchema,
  create,
  envelopeCodec,
  EVENT_TYPES,
  GATEWAY_EVENT_SUBJECTS,
  GATEWAY_EVENTS_STREAM,
  newEnvelope,
  ProjectDeletedSchema,
  toBusMessage,
  type Envelope,
} from '@runline/contracts';
import { projectorOf, type Projection } from '@runline/runtime';

/** A projection that records what it was given, and fails the first delivery of a chosen event. */
@Injectable()
class RecordingCopies implements Projection {
  readonly applied: string[] = [];
  failOnce = new Set<string>();

  async apply(envelope: Envelope): Promise<number> {
    if (this.failOnce.delete(envelope.id)) throw new Error('database unavailable');
    this.applied.push(envelope.type);
    return 0;
  }
}

class RecordingProjector extends projectorOf(RecordingCopies, [GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED, GATEWAY_EVENT_SUBJECTS.PROJECT_DELETED]) {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('projectorOf', () => {
  const orgId = randomUUID();
  const projectId = randomUUID();
  let bus: InProcessBus;
  let app: INestMicroservice;
  let copies: RecordingCopies;
  const subscribed: string[] = [];

  beforeAll(async () => {
    bus = new InProcessBus();
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = (spec, handler) => {
      subscribed.push(spec.durable);
      return subscribe(spec, handler);
    };
    @Module({ controllers: [RecordingProjector], providers: [RecordingCopies] })
    class RecordingModule {}
    app = await NestFactory.createMicroservice(RecordingModule, {
      strategy: new BusServer({ bus, service: 'copies', streams: [GATEWAY_EVENTS_STREAM], eventCodec: envelopeCodec, retryBaseDelayMs: 5 }),
      logger: false,
    });
    await app.listen();
    copies = app.get(RecordingCopies);
  });
  afterAll(async () => {
    await app?.close();
    await bus?.close();
  });

  it('subscribes once per subject, under the durable name a hand-written @EventPattern gets', () => {
    expect(subscribed.sort()).toEqual([busDurableName('copies', GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED), busDurableName('copies', GATEWAY_EVENT_SUBJECTS.PROJECT_DELETED)].sort());
  });

  it("hands each event of those subjects to the projection's apply, and redelivers one whose apply threw", async () => {
    const revoked = newEnvelope({ type: EVENT_TYPES.API_TOKEN_REVOKED, payload: create(ApiTokenRevokedSchema, { orgId, projectId, tokenId: randomUUID(), configVersion: 2n }), orgId, projectId });
    const deleted = newEnvelope({ type: EVENT_TYPES.PROJECT_DELETED, payload: create(ProjectDeletedSchema, { orgId, projectId, configVersion: 3n }), orgId, projectId });
    copies.failOnce.add(deleted.id);
    await bus.publish(toBusMessage(revoked));
    await bus.publish(toBusMessage(deleted));
    await until('both events applied', () => copies.applied.length === 2);
    expect(copies.applied.sort()).toEqual([EVENT_TYPES.API_TOKEN_REVOKED, EVENT_TYPES.PROJECT_DELETED].sort());
    expect(copies.failOnce.size).toBe(0);
  });
});
