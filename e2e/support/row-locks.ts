import pg from 'pg';

/** A transaction of the test's own that keeps rows locked until `release()`. */
export interface HeldRows {
  release(): Promise<void>;
}

/**
 * Opens a transaction on the test database, runs `lockingSelect` (a SELECT with its FOR UPDATE,
 * FOR KEY SHARE, … clause) in it and keeps the locks until `release()` rolls it back. Fails
 * unless the select locked exactly `expectedRows` rows, so a test never holds nothing by mistake.
 */
export async function holdRows(databaseUrl: string, lockingSelect: string, parameters: unknown[], expectedRows = 1): Promise<HeldRows> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rowCount } = await client.query(lockingSelect, parameters);
    if (rowCount !== expectedRows) throw new Error(`expected to lock ${expectedRows} rows, locked ${rowCount}`);
  } catch (error) {
    await client.end();
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query('ROLLBACK');
      } finally {
        await client.end();
      }
    },
  };
}
