import { outboxInsertStatements } from './outbox.repository.js';

const message = (i: number) => ({
  id: `m-${i}`,
  subject: 'invocation.evt.queued',
  data: new Uint8Array([i % 256]),
  headers: i % 2 ? { traceparent: `t-${i}` } : undefined,
});

describe('outbox insert statements', () => {
  it('writes the messages in emit order with numbered parameters', () => {
    const [statement, ...rest] = outboxInsertStatements('invocation', [message(1), message(2)]);

    expect(rest).toEqual([]);
    expect(statement.sql).toBe(
      'INSERT INTO "invocation"."outbox" (id, subject, data, headers) VALUES ($1, $2, $3, $4::jsonb), ($5, $6, $7, $8::jsonb)',
    );
    expect(statement.parameters).toEqual([
      'm-1', 'invocation.evt.queued', Buffer.from([1]), '{"traceparent":"t-1"}',
      'm-2', 'invocation.evt.queued', Buffer.from([2]), '{}',
    ]);
  });

  it('hands bytea parameters over as Buffers viewing the same bytes', () => {
    const backing = new Uint8Array([9, 8, 7, 6]);
    const [statement] = outboxInsertStatements('s', [{ id: 'x', subject: 'a.b', data: backing.subarray(1, 3) }]);

    expect(Buffer.isBuffer(statement.parameters[2])).toBe(true);
    expect([...(statement.parameters[2] as Buffer)]).toEqual([8, 7]);
  });

  it('splits large batches below the 65 535 parameter limit', () => {
    const statements = outboxInsertStatements('s', Array.from({ length: 2500 }, (_, i) => message(i)));

    expect(statements.map((statement) => statement.parameters.length)).toEqual([4000, 4000, 2000]);
    expect(statements[2].parameters[0]).toBe('m-2000');
  });

  it('writes nothing for no messages', () => {
    expect(outboxInsertStatements('s', [])).toEqual([]);
  });
});
