/**
 * Pages of run logs for several statuses at once. The logs API takes one status per request,
 * so the console reads one keyset stream per chosen status and merges them, newest first.
 * Each stream is only ever consumed from its front, in the API's own order, so a page never
 * repeats or skips a run even when two streams hold runs created in the same millisecond.
 */
export interface LogRow {
  invocationId: string;
  createdAt: string;
}

export interface LogStream<Row extends LogRow> {
  /** The status this stream reads; null for every status. */
  status: string | null;
  /** Runs read from the API but not shown yet, in the API's order. */
  buffer: Row[];
  /** The API's cursor for the next read; null before the first. */
  cursor: string | null;
  done: boolean;
}

/** Where the listing stands: one stream per chosen status (immutable; each page makes a new one). */
export interface LogPosition<Row extends LogRow> {
  streams: LogStream<Row>[];
}

export type ReadLogPage<Row extends LogRow> = (status: string | null, cursor: string | null, limit: number) => Promise<{ data: Row[]; nextCursor: string | null }>;

export function startPosition<Row extends LogRow>(statuses: readonly string[]): LogPosition<Row> {
  const wanted = statuses.length === 0 ? [null] : [...new Set(statuses)];
  return { streams: wanted.map((status) => ({ status, buffer: [], cursor: null, done: false })) };
}

export function hasMore(position: LogPosition<LogRow>): boolean {
  return position.streams.some((stream) => stream.buffer.length > 0 || !stream.done);
}

/** Newer first: by creation time, then by id (the API's tie-break). */
function newer(a: LogRow, b: LogRow): boolean {
  const byTime = Date.parse(a.createdAt) - Date.parse(b.createdAt);
  return byTime !== 0 ? byTime > 0 : a.invocationId > b.invocationId;
}

/** Reads what the next `size` runs need and answers them with the position after them. */
export async function readPage<Row extends LogRow>(
  position: LogPosition<Row>,
  size: number,
  read: ReadLogPage<Row>,
): Promise<{ rows: Row[]; next: LogPosition<Row> }> {
  const streams = await Promise.all(
    position.streams.map(async (stream) => {
      if (stream.done || stream.buffer.length >= size) return stream;
      const page = await read(stream.status, stream.cursor, size);
      return { ...stream, buffer: [...stream.buffer, ...page.data], cursor: page.nextCursor, done: page.nextCursor === null };
    }),
  );
  const fronts = streams.map(() => 0);
  const rows: Row[] = [];
  while (rows.length < size) {
    let pick = -1;
    streams.forEach((stream, index) => {
      const head = stream.buffer[fronts[index]!];
      if (head && (pick < 0 || newer(head, streams[pick]!.buffer[fronts[pick]!]!))) pick = index;
    });
    if (pick < 0) break;
    rows.push(streams[pick]!.buffer[fronts[pick]!]!);
    fronts[pick]!++;
  }
  return { rows, next: { streams: streams.map((stream, index) => ({ ...stream, buffer: stream.buffer.slice(fronts[index]) })) } };
}
