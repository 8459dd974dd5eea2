/**
 * Follows the life of every run as the invocation service publishes it: a durable JetStream
 * consumer of its own on `invocation.evt.>`, each message decoded with the published protobuf
 * schemas (proto/runline/invocation/v1/events.proto, generated into `@runline/contracts`).
 *
 * A durable consumer remembers how far it got: stop the program, start it again with the same
 * name, and it goes on after the last event it acknowledged. Events of one run arrive in the
 * order they happened (the service publishes them in commit order to one stream).
 */
import { toJson, type JsonValue } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeEnvelope, eventRegistration, STREAM_NAMES, STREAM_SUBJECTS, unpackPayload } from '@runline/contracts';

export interface SubscriberOptions {
  natsUrl: string;
  /** The deployment's `BUS_PREFIX` (empty when it has none). */
  prefix: string;
  /** The durable consumer's name: one per subscribing program, kept across restarts. */
  name: string;
  /** `all`: from the first event the stream still holds; `new`: only events after creation. */
  from?: 'all' | 'new';
}

/** One event as the subscriber sees it. */
export interface InvocationEvent {
  /** The stream's sequence number: its position in the whole stream. */
  streamSequence: number;
  /** The logical subject, without the deployment's prefix, e.g. `invocation.evt.invocation-started`. */
  subject: string;
  /** The envelope's wire type, e.g. `InvocationStarted`. */
  type: string;
  id: string;
  orgId: string;
  projectId: string;
  invocationId: string;
  occurredAt: string;
  traceparent: string;
  /** The payload message in protobuf's canonical JSON form. */
  payload: JsonValue;
}

export interface Subscription {
  /** Resolves when the consumer stopped: after `stop()`, or when the connection closed. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts following; `onEvent` is awaited before each acknowledgement, so a crash redelivers. */
export async function followInvocationEvents(options: SubscriberOptions, onEvent: (event: InvocationEvent) => void | Promise<void>): Promise<Subscription> {
  // NATS_URL may name the nodes of a cluster, comma-separated; nats.js takes them as a list.
  const servers = options.natsUrl.split(',').map((server) => server.trim()).filter(Boolean);
  const nc = await connect({ servers, name: options.name });
  const wire = (name: string, separator: string) => (options.prefix ? `${options.prefix}${separator}${name}` : name);
  const stream = wire(STREAM_NAMES.INVOCATION_EVENTS, '_');
  const durable = wire(options.name, '_');
  const jsm = await jetstreamManager(nc);
  // Adding a consumer that exists with the same configuration is a no-op, so restarts are safe.
  await jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: options.from === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
    filter_subject: wire(STREAM_SUBJECTS.INVOCATION_EVENTS, '.'),
  });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 100 });
  const prefixLength = options.prefix ? options.prefix.length + 1 : 0;

  const done = (async () => {
    for await (const message of messages) {
      const envelope = decodeEnvelope(message.data);
      const { payload } = unpackPayload(envelope);
      await onEvent({
        streamSequence: message.info.streamSequence,
        subject: message.subject.slice(prefixLength),
        type: envelope.type,
        id: envelope.id,
        orgId: envelope.orgId,
        projectId: envelope.projectId,
        invocationId: envelope.invocationId,
        occurredAt: envelope.occurredAt ? timestampDate(envelope.occurredAt).toISOString() : '',
        traceparent: envelope.traceparent,
        payload: toJson(eventRegistration(envelope.type).schema, payload),
      });
      message.ack();
    }
  })();

  return {
    done,
    // The iterator is stopped from here, never from inside its own loop (that would hang).
    async stop() {
      messages.stop();
      await done;
      await drain(nc);
    },
  };
}

async function drain(nc: NatsConnection): Promise<void> {
  if (!nc.isClosed()) await nc.drain();
}
