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

/**
 * Like `holdRows`, but for rows still being written: reruns `lockingSelect` in the one
 * transaction (each run sees rows committed since) until it has locked `expectedRows` distinct
 * rows (by their first column), so each row is held from the moment it appears rather than
 * from when the last one did.
 */
export async function holdRowsAsTheyCome(databaseUrl: string, lockingSelect: string, expectedRows: number, timeoutMs: number): Promise<HeldRows> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  const locked = new Set<unknown>();
  try {
    await client.query('BEGIN');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<unknown[]>({ text: lockingSelect, rowMode: 'array' });
      for (const row of rows) locked.add(row[0]);
      if (locked.size >= expectedRows) break;
      if (Date.now() > deadline) throw new Error(`expected to lock ${expectedRows} rows, locked ${locked.size} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (locked.size !== expectedRows) throw new Error(`expected to lock ${expectedRows} rows, locked ${locked.size}`);
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
