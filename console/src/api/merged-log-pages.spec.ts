import { hasMore, readPage, startPosition, type LogPosition, type ReadLogPage } from './merged-log-pages.js';

interface Row {
  invocationId: string;
  createdAt: string;
  status: string;
}

/** Runs newest first, some created in the same millisecond; statuses cycle through three. */
const runs: Row[] = Array.from({ length: 57 }, (_, index) => ({
  invocationId: `id-${String(1000 - index).padStart(4, '0')}`,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 0) - Math.floor(index / 3) * 1000).toISOString(),
  status: ['FAILED', 'SUCCEEDED', 'TIMEOUT'][index % 3]!,
}));

/** Keyset pages over `runs` as the logs API answers them: one status, a cursor, a limit. */
const calls: Array<{ status: string | null; cursor: string | null }> = [];
const read: ReadLogPage<Row> = async (status, cursor, limit) => {
  calls.push({ status, cursor });
  const matching = runs.filter((run) => status === null || run.status === status);
  const start = cursor === null ? 0 : matching.findIndex((run) => run.invocationId === cursor) + 1;
  const data = matching.slice(start, start + limit);
  return { data, nextCursor: start + limit < matching.length ? data[data.length - 1]!.invocationId : null };
};

async function everyPage(statuses: string[], size: number): Promise<Row[][]> {
  const pages: Row[][] = [];
  let position: LogPosition<Row> = startPosition(statuses);
  while (hasMore(position)) {
    const page = await readPage(position, size, read);
    pages.push(page.rows);
    position = page.next;
  }
  return pages;
}

describe('merged log pages', () => {
  beforeEach(() => (calls.length = 0));

  it('reads one stream without a status filter, page by page with the cursor', async () => {
    const pages = await everyPage([], 20);
    expect(pages.map((page) => page.length)).toEqual([20, 20, 17]);
    expect(pages.flat()).toEqual(runs);
    expect(calls.map((call) => call.status)).toEqual([null, null, null]);
  });

  it('merges two statuses newest first with no run repeated or skipped, whatever the page size', async () => {
    const wanted = runs.filter((run) => run.status === 'FAILED' || run.status === 'TIMEOUT');
    for (const size of [1, 5, 7, 19, 200]) {
      const pages = await everyPage(['FAILED', 'TIMEOUT'], size);
      expect(pages.flat().map((run) => run.invocationId)).toEqual(wanted.map((run) => run.invocationId));
      expect(pages.slice(0, -1).every((page) => page.length === size)).toBe(true);
    }
  });

  it('reads a stream again only when its buffer cannot fill the next page', async () => {
    const first = await readPage(startPosition<Row>(['FAILED', 'SUCCEEDED']), 10, read);
    expect(calls).toEqual([
      { status: 'FAILED', cursor: null },
      { status: 'SUCCEEDED', cursor: null },
    ]);
    // Ten rows shown, five of each status; each stream keeps the five it read beyond them.
    expect(first.next.streams.map((stream) => stream.buffer.length)).toEqual([5, 5]);
    calls.length = 0;
    await readPage(first.next, 5, read);
    expect(calls).toEqual([]);
  });

  it('a repeated status is read once', () => {
    expect(startPosition(['FAILED', 'FAILED']).streams.map((stream) => stream.status)).toEqual(['FAILED']);
  });
});
