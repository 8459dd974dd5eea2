import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsServers } from '@runline/bus';

/** Deletes every JetStream stream a test run created under its prefix (`<prefix>_<NAME>`). */
export async function deletePrefixedStreams(natsUrl: string, prefix: string): Promise<void> {
  if (!prefix) throw new Error('refusing to delete streams without a prefix');
  const nc = await connect({ servers: natsServers(natsUrl) });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(`${prefix}_`)) names.push(name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
