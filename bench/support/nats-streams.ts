import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsServers } from '@runline/bus';

/** Deletes the streams a gateway created under `prefix` (named `<prefix>_…`); returns their names. */
export async function deleteStreamsWithPrefix(natsUrl: string, prefix: string): Promise<string[]> {
  const connection = await connect({ servers: natsServers(natsUrl) });
  try {
    const manager = await jetstreamManager(connection);
    const names: string[] = [];
    for await (const name of manager.streams.names()) if (name.startsWith(`${prefix}_`)) names.push(name);
    await Promise.all(names.map((name) => manager.streams.delete(name)));
    return names;
  } finally {
    await connection.close();
  }
}
