import { isTransientDatabaseError } from './transient-errors.js';

const cut = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('transient database errors', () => {
  it.each([
    ['an administrator cut the connection (57P01)', cut],
    ['the server cannot take connections now (57P03)', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['a connection exception (08006)', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['a refused TCP connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['TypeORM wrapping the driver error', Object.assign(new Error('query failed'), { driverError: cut })],
    ['a serialization failure (40001)', Object.assign(new Error('could not serialize access'), { code: '40001' })],
  ])('%s is transient', (_what, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a syntax error (42601)', Object.assign(new Error('syntax error'), { code: '42601' })],
    ['a plain bug', new TypeError('x is undefined')],
    ['not an error', 'nope'],
  ])('%s is not', (_what, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });
});
