import type { EntityManager } from 'typeorm';
import { ProjectStateReader } from './project-state-reader.js';

const PROJECT_A = '00000000-0000-4000-8000-00000000000a';
const PROJECT_B = '00000000-0000-4000-8000-00000000000b';

/** A manager whose project_copies holds A (pollable, version 3) and B (switched off); it records each query's ids. */
function fakeManager() {
  const queries: string[][] = [];
  const rows = [
    { project_id: PROJECT_A, external_api_enabled: true, deleted: false, config_version: 3 },
    { project_id: PROJECT_B, external_api_enabled: false, deleted: false, config_version: 7 },
  ];
  const manager = {
    query: async (_sql: string, [ids]: [string[]]) => {
      queries.push(ids);
      return rows.filter((row) => ids.includes(row.project_id));
    },
  } as unknown as EntityManager;
  return { manager, queries };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Two turns of the event loop: a read made at once has sent its query by then (the reader's turn, then the batch's). */
const twoTurns = async () => {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
};

describe('ProjectStateReader', () => {
  it('reads a poll at once when no read was made within the window, and the ones coming due sooner after it together, when the window ends', async () => {
    const { manager, queries } = fakeManager();
    // A window long enough that a busy machine's turns of the event loop stay well inside it.
    const reader = new ProjectStateReader(manager, 300);
    const startedAt = performance.now();
    const first = reader.read(PROJECT_A);
    await twoTurns();
    expect(queries).toEqual([[PROJECT_A]]);
    await expect(first).resolves.toEqual({ pollable: true, configVersion: 3 });

    const others = [reader.read(PROJECT_B), reader.read(PROJECT_A)];
    await sleep(5);
    others.push(reader.read('00000000-0000-4000-8000-0000000000ff'));
    expect(queries).toHaveLength(1);
    await expect(Promise.all(others)).resolves.toEqual([{ pollable: false, configVersion: 7 }, { pollable: true, configVersion: 3 }, null]);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(299);
    expect(queries).toHaveLength(2);
    expect([...queries[1]!].sort()).toEqual([PROJECT_A, PROJECT_B, '00000000-0000-4000-8000-0000000000ff'].sort());
  });

  it('reads a poll that comes due after the window closed at once, in a query of its own', async () => {
    const { manager, queries } = fakeManager();
    const reader = new ProjectStateReader(manager, 5);
    await reader.read(PROJECT_A);
    await sleep(10);
    const second = reader.read(PROJECT_B);
    await twoTurns();
    expect(queries).toEqual([[PROJECT_A], [PROJECT_B]]);
    await second;
  });

  it('with no window, reads what comes due in one turn of the event loop together', async () => {
    const { manager, queries } = fakeManager();
    const reader = new ProjectStateReader(manager, 0);
    await Promise.all([reader.read(PROJECT_A), reader.read(PROJECT_B)]);
    await reader.read(PROJECT_A);
    expect(queries).toEqual([[PROJECT_A, PROJECT_B], [PROJECT_A]]);
  });
});
