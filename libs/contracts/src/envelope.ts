/**
 * Building, encoding, decoding and unpacking envelopes (runline/common/v1/envelope.proto).
 *
 * Producer: `newEnvelope(...)` → store `encodeEnvelope(envelope)` in the outbox → the relay
 * publishes `toBusMessage(envelope)`.
 * Consumer: `decodeEnvelope(data)` (validated) → `unpackPayload(envelope)` → handle.
 * `InvalidEnvelopeError` and `UnknownEventTypeError` mean the message can never be handled:
 * consumers settle it with `term()` (or record it as ignorable), not with a retry.
 */
import { randomUUID } from 'node:crypto';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { type Envelope, EnvelopeSchema } from './gen/runline/common/v1/envelope_pb.js';
import {
  type EventPayload,
  type EventType,
  type UnpackedEvent,
  eventRegistration,
} from './event-registry.js';

/** The bytes are not an envelope, or a required field is missing. */
export class InvalidEnvelopeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidEnvelopeError';
  }
}

/** A handler bound to one event type received another. */
export class UnexpectedEventTypeError extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`expected event type "${expected}", got "${actual}"`);
    this.name = 'UnexpectedEventTypeError';
  }
}

/** What `newEnvelope` needs; everything else is filled in. */
export interface NewEnvelopeInput<T extends EventType> {
  /** Registered wire type, for example `EVENT_TYPES.PROJECT_CREATED`. */
  type: T;
  /** The payload message; must be the message `type` names (checked at run time too). */
  payload: EventPayload<T>;
  orgId: string;
  projectId?: string;
  invocationId?: string;
  /** Defaults to the new envelope's own id (first message of a chain). */
  correlationId?: string;
  /** Id of the message that caused this one; see `causedBy`. */
  causationId?: string;
  /** W3C `traceparent` of the current operation; defaults to the active span's (none without one). */
  traceparent?: string;
  /** When the state change happened; defaults to now. */
  occurredAt?: Date;
  /** The envelope id; defaults to a random UUID. Give one when the event is already stored under an id. */
  id?: string;
  /** The event's place in its run's history (a run's event sequence); 0 (default) when none. */
  sequence?: number;
}

/**
 * The chain fields for a message caused by `cause`: same correlation, cause's id, same trace.
 * The trace is the active span's when there is one (the consumer's span, itself continuing
 * `cause`), so the new message's parent is the work that sent it; else `cause`'s own.
 */
export function causedBy(cause: Envelope): Pick<NewEnvelopeInput<EventType>, 'correlationId' | 'causationId' | 'traceparent'> {
  return { correlationId: cause.correlationId || cause.id, causationId: cause.id, traceparent: activeTraceparent() ?? cause.traceparent };
}

/**
 * The active span's W3C `traceparent`, or undefined. `@opentelemetry/api` alone: without a
 * registered tracer provider there is never an active span, so envelopes carry none.
 */
export function activeTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!isSpanContextValid(span.spanContext())) return undefined;
  return `00-${traceId}-${spanId}-0${(traceFlags & 1).toString(16)}`;
}

/** A new envelope around `payload`, with a random UUID id unless `input.id` is given. */
export function newEnvelope<T extends EventType>(input: NewEnvelopeInput<T>): Envelope {
  const { schema } = eventRegistration(input.type);
  // Types alone cannot stop a payload cast to the wrong message; a mismatch here would put
  // bytes on the wire that every consumer misreads, so refuse it.
  if (input.payload.$typeName !== schema.typeName) {
    throw new TypeError(`payload ${input.payload.$typeName} does not match event type "${input.type}" (${schema.typeName})`);
  }
  const id = input.id ?? randomUUID();
  return create(EnvelopeSchema, {
    id,
    type: input.type,
    occurredAt: timestampFromDate(input.occurredAt ?? new Date()),
    orgId: input.orgId,
    projectId: input.projectId ?? '',
    invocationId: input.invocationId ?? '',
    correlationId: input.correlationId ?? id,
    causationId: input.causationId ?? '',
    traceparent: input.traceparent ?? activeTraceparent() ?? '',
    payload: toBinary(schema, input.payload),
    sequence: BigInt(input.sequence ?? 0),
  });
}

/** Throws `InvalidEnvelopeError` unless `id`, `type` and `occurredAt` are present. */
export function assertValidEnvelope(envelope: Envelope): void {
  const missing = [
    envelope.id === '' ? 'id' : undefined,
    envelope.type === '' ? 'type' : undefined,
    envelope.occurredAt === undefined ? 'occurredAt' : undefined,
  ].filter((field) => field !== undefined);
  if (missing.length > 0) {
    throw new InvalidEnvelopeError(`envelope ${envelope.id || '(no id)'} lacks ${missing.join(', ')}`);
  }
}

/** Binary encoding of a valid envelope (what the outbox stores and the bus carries). */
export function encodeEnvelope(envelope: Envelope): Uint8Array {
  assertValidEnvelope(envelope);
  return toBinary(EnvelopeSchema, envelope);
}

/** Decodes and validates; throws `InvalidEnvelopeError` on bad bytes or missing fields. */
export function decodeEnvelope(data: Uint8Array): Envelope {
  let envelope: Envelope;
  try {
    envelope = fromBinary(EnvelopeSchema, data);
  } catch (error) {
    throw new InvalidEnvelopeError(`not an envelope: ${messageOf(error)}`, { cause: error });
  }
  assertValidEnvelope(envelope);
  return envelope;
}

/**
 * Decodes the payload with the schema `envelope.type` names. Throws `UnknownEventTypeError`
 * for an unregistered type and `InvalidEnvelopeError` when the payload does not decode.
 */
export function unpackPayload(envelope: Envelope): UnpackedEvent {
  const { schema } = eventRegistration(envelope.type);
  try {
    // The registry lookup just proved the type and schema belong together.
    return { type: envelope.type, payload: fromBinary(schema, envelope.payload) } as UnpackedEvent;
  } catch (error) {
    throw new InvalidEnvelopeError(`payload of ${envelope.id} (${envelope.type}) does not decode: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

/**
 * Unpacks a payload that must be of type `expected` (a handler bound to one subject).
 * Throws `UnexpectedEventTypeError` when the envelope carries any other type.
 */
export function unpackPayloadAs<T extends EventType>(envelope: Envelope, expected: T): EventPayload<T> {
  if (envelope.type !== expected) {
    throw new UnexpectedEventTypeError(expected, envelope.type);
  }
  return unpackPayload(envelope).payload as EventPayload<T>;
}

/** The bus message for `envelope`: its id as the dedupe key, its registered subject. */
/**
 * A message as the bus publishes it. Declared here, not imported from `@runline/bus`, because
 * contracts depend on nothing of ours; the bus's `BusMessage` has the same shape.
 */
export interface WireMessage {
  id: string;
  subject: string;
  data: Uint8Array;
  headers?: Record<string, string>;
}

/**
 * The envelope's `traceparent` also goes in the `traceparent` header: the outbox row keeps it,
 * and the bus continues a trace from headers whatever the payload is.
 */
export function toBusMessage(envelope: Envelope): WireMessage {
  const { subject } = eventRegistration(envelope.type);
  const data = encodeEnvelope(envelope);
  return envelope.traceparent ? { id: envelope.id, subject, data, headers: { traceparent: envelope.traceparent } } : { id: envelope.id, subject, data };
}

/** Converts between envelopes and bus bytes; `decode` validates. */
export interface EnvelopeCodec {
  encode(envelope: Envelope): Uint8Array;
  decode(data: Uint8Array): Envelope;
}

/** The codec the bus's Nest transport uses to hand handlers an `Envelope`. */
export const envelopeCodec: EnvelopeCodec = Object.freeze({ encode: encodeEnvelope, decode: decodeEnvelope });

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
