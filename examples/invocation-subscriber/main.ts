/**
 * Prints every invocation event as one JSON line, until Ctrl-C:
 *
 *   NATS_URL=nats://127.0.0.1:4222 BUS_PREFIX= SUBSCRIBER_NAME=my-audit npm run example:subscriber
 *
 * SUBSCRIBER_FROM=new skips what the stream already holds when the consumer is first made.
 */
import { followInvocationEvents } from './invocation-subscriber.js';

const options = {
  natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  prefix: process.env.BUS_PREFIX ?? '',
  name: process.env.SUBSCRIBER_NAME ?? 'invocation-subscriber-example',
  from: process.env.SUBSCRIBER_FROM === 'new' ? ('new' as const) : ('all' as const),
};
const subscription = await followInvocationEvents(options, (event) => {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}).catch((error: Error) => {
  const hint = error.name === 'StreamNotFoundError' ? ': no invocation events stream there; is Runline running on this NATS with this BUS_PREFIX?' : '';
  console.error(`invocation-subscriber: ${options.natsUrl} (prefix "${options.prefix}"): ${error.message}${hint}`);
  process.exit(1);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void subscription.stop());
await subscription.done;
