import { ConfigError, loadConfig } from '@runline/runtime';
import { SchedulerConfig } from './config.js';

describe('SchedulerConfig', () => {
  it('has defaults: 100 ms lead, a sweep every second, batches of 500, ended jobs kept 30 days, pruned hourly', () => {
    expect(loadConfig(SchedulerConfig, {})).toMatchObject({
      SCHEDULER_FIRE_LEAD_MS: 100,
      SCHEDULER_SWEEP_INTERVAL_MS: 1000,
      SCHEDULER_BATCH_SIZE: 500,
      SCHEDULER_RETENTION_DAYS: 30,
      SCHEDULER_PRUNE_INTERVAL_MS: 3_600_000,
    });
  });

  it('has defaults for schedule triggers: 5 s before a fire counts as missed, buffered fires rechecked every second, fires kept 7 days', () => {
    expect(loadConfig(SchedulerConfig, {})).toMatchObject({
      SCHEDULER_RUN_REQUEST_TIMEOUT_MS: 5000,
      SCHEDULER_MISSED_FIRE_AFTER_MS: 5000,
      SCHEDULER_BUFFER_RECHECK_MS: 1000,
      SCHEDULER_FIRE_RETENTION_DAYS: 7,
      SCHEDULER_FIRE_BATCHES_IN_FLIGHT: 4,
    });
    expect(() => loadConfig(SchedulerConfig, { SCHEDULER_MISSED_FIRE_AFTER_MS: '10' })).toThrow(/SCHEDULER_MISSED_FIRE_AFTER_MS/);
  });

  it('refuses a retention under a day and a prune interval under 100 ms', () => {
    expect(() => loadConfig(SchedulerConfig, { SCHEDULER_RETENTION_DAYS: '0', SCHEDULER_PRUNE_INTERVAL_MS: '10' })).toThrow(
      /SCHEDULER_RETENTION_DAYS.*SCHEDULER_PRUNE_INTERVAL_MS/,
    );
  });

  it('reads the variables, and a lead of 0', () => {
    expect(loadConfig(SchedulerConfig, { SCHEDULER_FIRE_LEAD_MS: '0', SCHEDULER_SWEEP_INTERVAL_MS: '250', SCHEDULER_BATCH_SIZE: '50' })).toMatchObject({
      SCHEDULER_FIRE_LEAD_MS: 0,
      SCHEDULER_SWEEP_INTERVAL_MS: 250,
      SCHEDULER_BATCH_SIZE: 50,
    });
  });

  it('fails at boot naming each bad variable', () => {
    const load = () => loadConfig(SchedulerConfig, { SCHEDULER_FIRE_LEAD_MS: '-1', SCHEDULER_SWEEP_INTERVAL_MS: 'often', SCHEDULER_BATCH_SIZE: '0' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/SCHEDULER_FIRE_LEAD_MS.*SCHEDULER_SWEEP_INTERVAL_MS.*SCHEDULER_BATCH_SIZE/);
  });
});
