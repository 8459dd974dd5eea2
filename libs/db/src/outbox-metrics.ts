import { Counter, Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { qualified, serviceSchemaOf } from './service-schema.js';

/** What the outbox relay reports as it goes. */
export interface OutboxMetrics {
  /** A commit wrote these messages to the outbox (each counted once, at its commit). */
  committed(messages: readonly BusMessage[]): void;
}

/**
 * The outbox in Prometheus terms, per service (the registry's `service` label):
 * - `runline_outbox_messages_committed_total{subject}`: messages committed, by logical subject.
 *   Every state change of ours commits its events here, so for the invocation service this
 *   counts runs by transition exactly once, whatever path the run took (e.g.
 *   `subject="invocation.evt.invocation-succeeded"`); deploy/grafana/runline.json uses it.
 * - `runline_outbox_unpublished_messages` and `runline_outbox_oldest_unpublished_age_seconds`:
 *   read from the table when scraped (one query on the partial index of unpublished rows). A
 *   growing age is the outbox lag: committed changes the bus has not had yet.
 */
export function prometheusOutboxMetrics(registry: Registry, dataSource: DataSource): OutboxMetrics {
  const table = qualified(serviceSchemaOf(dataSource), 'outbox');
  const committed = new Counter({
    name: 'runline_outbox_messages_committed_total',
    help: 'Messages committed to the outbox (events and commands), by logical subject.',
    labelNames: ['subject'],
    registers: [registry],
  });
  let backlog: Promise<{ count: number; ageSeconds: number }> | undefined;
  // One query serves both gauges of a scrape.
  const readBacklog = () =>
    (backlog ??= dataSource
      .query<Array<{ count: number; age: number | null }>>(
        `SELECT count(*)::int AS count, extract(epoch FROM now() - min(created_at))::float8 AS age FROM ${table} WHERE published_at IS NULL`,
      )
      .then(([row]) => ({ count: row?.count ?? 0, ageSeconds: Math.max(0, row?.age ?? 0) }))
      .finally(() => setImmediate(() => (backlog = undefined))));
  new Gauge({
    name: 'runline_outbox_unpublished_messages',
    help: 'Committed outbox messages not yet published to the bus.',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).count);
    },
  });
  new Gauge({
    name: 'runline_outbox_oldest_unpublished_age_seconds',
    help: 'Age of the oldest committed outbox message not yet published (0 when none): the outbox lag.',
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).ageSeconds);
    },
  });
  return {
    committed(messages) {
      for (const message of messages) committed.inc({ subject: message.subject });
    },
  };
}
