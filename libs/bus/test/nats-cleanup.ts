import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { testNatsUrl } from '@runline/testing';

/** Deletes every stream a test run created under `prefix` (named `<prefix>_…`). */
export async function deleteStreamsWithPrefix(prefix: string): Promise<void> {
  const nc = await connect({ servers: testNatsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(`${prefix}_`)) names.push(name);
    await Promise.all(names.map((name) => jsm.streams.delete(name)));
  } finally {
    await nc.close();
  }
}
