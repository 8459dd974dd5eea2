import type { DataSource } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase } from '@runline/testing';
import { invocationService } from '../../src/invocation.service.js';

/** A fresh database with the invocation service's schema, as the service's repositories use it. */
export interface InvocationDatabase {
  url: string;
  dataSource: DataSource;
  transactions: TransactionRunner;
  close(): Promise<void>;
}

/** Opens one; `notify` hears what each commit hands the outbox relay (nothing is published). */
export async function openInvocationDatabase(notify: (messages: readonly BusMessage[]) => void = () => undefined): Promise<InvocationDatabase> {
  const database = await createTestDatabase();
  await migrateServices([invocationService], database.url);
  const dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', migrations: [] });
  await dataSource.initialize();
  return {
    url: database.url,
    dataSource,
    transactions: new TransactionRunner(dataSource, { notify: (messages) => notify(messages ?? []) }),
    async close() {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

/**
 * One for the suite this is called in: opened before its tests, closed after them. Its fields
 * are there once the tests run.
 */
export function useInvocationDatabase(notify?: (messages: readonly BusMessage[]) => void): Omit<InvocationDatabase, 'close'> {
  let opened: InvocationDatabase | undefined;
  beforeAll(async () => {
    opened = await openInvocationDatabase(notify);
  });
  afterAll(async () => {
    await opened?.close();
  });
  const database = () => {
    if (opened === undefined) throw new Error('the database opens before the suite runs its tests');
    return opened;
  };
  return {
    get url() {
      return database().url;
    },
    get dataSource() {
      return database().dataSource;
    },
    get transactions() {
      return database().transactions;
    },
  };
}
