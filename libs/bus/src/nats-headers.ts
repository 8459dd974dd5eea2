import type { MsgHdrs } from '@nats-io/transport-node';

/** The header JetStream deduplicates on; a stored message's id. */
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** A message's own headers, without the `Nats-*` ones the server and client use. */
export function toRecord(h: MsgHdrs | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  for (const key of h?.keys() ?? []) {
    if (!/^nats-/i.test(key)) record[key] = h?.get(key) ?? '';
  }
  return record;
}
