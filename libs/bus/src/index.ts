/**
 * `@runline/bus`: the message bus every service talks through.
 *
 * - The contract (`Bus`, its message and subscription types, and the four request errors) is
 *   in `bus.ts`, documented there.
 * - `JetStreamBus` (NATS mode, `NATS_URL` set) and `InProcessBus` (embedded mode) implement it
 *   with the same delivery semantics; one contract suite (`libs/bus/test/bus.contract.ts`) runs
 *   against both.
 * - `BusServer` wires a `Bus` into Nest as a custom transport: `@EventPattern` handlers become
 *   durable subscriptions, `@MessagePattern` handlers answer requests. `BUS` is the injection
 *   token for the service's `Bus` instance.
 */
export * from './bus.js';
export { type BusLogger } from './bus-logger.js';
export { InProcessBus, type InProcessBusOptions } from './in-process-bus.js';
export { assertStreamReplicas, JetStreamBus, natsServers, type JetStreamBusOptions } from './jetstream-bus.js';
export { BusContext, type BusContextArgs } from './bus.context.js';
export {
  BUS,
  BUS_TRANSPORT,
  BusServer,
  busDurableName,
  type BusCodec,
  type BusServerOptions,
} from './bus.server.js';
export { redeliveryDelay } from './settlement.js';
