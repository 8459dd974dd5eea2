import { DataSource } from 'typeorm';
import { assertSchemaName, qualified, serviceSchemaOf } from './service-schema.js';

describe('service schema names', () => {
  it.each(['gateway', 'dead_letter', '_private', 'svc2'])('accepts %s', (name) => {
    expect(() => assertSchemaName(name)).not.toThrow();
  });

  it.each(['', 'Gateway', 'dead-letter', '2svc', 'a b', 'x"; DROP SCHEMA public; --', 'a'.repeat(64)])('refuses %j', (name) => {
    expect(() => assertSchemaName(name)).toThrow(/invalid schema name/);
  });

  it('reads the schema of a postgres data source, and refuses one without', () => {
    expect(serviceSchemaOf(new DataSource({ type: 'postgres', schema: 'invocation' }))).toBe('invocation');
    expect(() => serviceSchemaOf(new DataSource({ type: 'postgres' }))).toThrow(/with a schema/);
  });

  it('quotes qualified names', () => {
    expect(qualified('scheduler', 'outbox')).toBe('"scheduler"."outbox"');
  });
});
