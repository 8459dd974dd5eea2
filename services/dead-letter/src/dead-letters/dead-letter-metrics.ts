import { Inject, Injectable } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY } from '@runline/runtime';

/**
 * The dead letters in Prometheus terms, read from the table when scraped, so the figures are
 * exact whichever replica recorded or replayed a letter: `runline_dead_letters{target_type,
 * state}` with state `unreplayed`, `replaying` (claimed, outcome not recorded yet),
 * `replay_succeeded` and `replay_failed`. Letters written and replayed per second are the
 * rates of these (deploy/grafana/runline.json). One grouped count per scrape: dead letters are
 * failures, few next to runs.
 */
@Injectable()
export class DeadLetterMetrics {
  constructor(dataSource: DataSource, @Inject(METRICS_REGISTRY) registry: Registry) {
    new Gauge({
      name: 'runline_dead_letters',
      help: 'Dead letters by target type and replay state.',
      labelNames: ['target_type', 'state'],
      registers: [registry],
      async collect() {
        const rows = await dataSource.query<Array<{ target_type: string; state: string; count: number }>>(
          `SELECT target_type,
                  CASE WHEN replayed_at IS NULL THEN 'unreplayed'
                       WHEN replay_status IS NULL THEN 'replaying'
                       WHEN replay_status = 'SUCCESS' THEN 'replay_succeeded'
                       ELSE 'replay_failed' END AS state,
                  count(*)::int AS count
             FROM dead_letters GROUP BY 1, 2`,
        );
        this.reset();
        for (const row of rows) this.set({ target_type: row.target_type, state: row.state }, row.count);
      },
    });
  }
}
