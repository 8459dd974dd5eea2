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
