import { DataSource } from 'typeorm';
import { OutboxRelay, streamOfSubject } from './outbox-relay.js';

const bus = { publish: async () => undefined };
const dataSource = new DataSource({ type: 'postgres', schema: 'svc' });

describe('OutboxRelay options', () => {
  it.each([
    ['sweepIntervalMs', 0],
    ['batchSize', -1],
    ['batchSize', 1.5],
    ['retentionMs', Number.NaN],
  ])('refuses %s = %p', (name, value) => {
    expect(() => new OutboxRelay(dataSource, bus, { [name]: value })).toThrow(new RegExp(`${name} must be a positive integer`));
  });

  it('needs a data source with a service schema', () => {
    expect(() => new OutboxRelay(new DataSource({ type: 'postgres' }), bus)).toThrow(/with a schema/);
  });

  it('ignores notify() before start() and stop() before start()', async () => {
    const relay = new OutboxRelay(dataSource, bus);
    relay.notify();
    await expect(relay.stop()).resolves.toBeUndefined();
  });
});

describe('streamOfSubject', () => {
  it.each([
    ['invocation.evt.invocation-queued', 'invocation.evt'],
    ['callback.cmd.deliver-callback', 'callback.cmd'],
    ['single', 'single'],
    ['two.tokens', 'two.tokens'],
  ])('%s orders with %s', (subject, group) => {
    expect(streamOfSubject(subject)).toBe(group);
  });
});
