import { GroupCommit } from './group-commit.js';

function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

describe('GroupCommit', () => {
  it('writes a lone item at once, and batches what arrives while a write is in flight', async () => {
    const gate = deferred();
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await gate.promise;
      return items.map((item) => item * 10);
    }, 1);
    const first = commit.submit(1);
    const rest = [2, 3, 4].map((item) => commit.submit(item));
    expect(batches).toEqual([[1]]);
    gate.release();
    await expect(first).resolves.toBe(10);
    await expect(Promise.all(rest)).resolves.toEqual([20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('with gatherTurn, writes what arrives in one turn of the event loop together, the first item too, and the next turn\'s in its own', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((item) => item * 10);
      },
      2,
      256,
      true,
    );
    const turn = [1, 2, 3].map((item) => commit.submit(item));
    expect(batches).toEqual([]);
    await expect(Promise.all(turn)).resolves.toEqual([10, 20, 30]);
    await expect(commit.submit(4)).resolves.toBe(40);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('keeps up to maxConcurrent writes in flight and caps the batch size', async () => {
    const gate = deferred();
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      await gate.promise;
      return items;
    }, 2, 2);
    const all = [1, 2, 3, 4, 5].map((item) => commit.submit(item));
    expect(batches).toEqual([[1], [2]]);
    gate.release();
    await Promise.all(all);
    expect(batches.flat().sort()).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(2);
  });

  it('rejects every item of a failed batch, and goes on with the next', async () => {
    let calls = 0;
    const commit = new GroupCommit<number, number>(async (items) => {
      calls++;
      if (calls === 1) throw new Error('database down');
      return items;
    }, 1);
    await expect(commit.submit(1)).rejects.toThrow('database down');
    await expect(commit.submit(2)).resolves.toBe(2);
  });
});
