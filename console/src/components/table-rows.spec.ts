import { nextSort, sortRows } from './table-rows.js';

const rows = [
  { name: 'b', size: 2 },
  { name: 'a', size: 1 },
  { name: 'c', size: 2 },
];
const bySize = (a: { size: number }, b: { size: number }) => a.size - b.size;

describe('sortRows', () => {
  it('orders by the column, ascending or descending, keeping equal rows in their order', () => {
    expect(sortRows(rows, bySize, 'ascending').map((row) => row.name)).toEqual(['a', 'b', 'c']);
    expect(sortRows(rows, bySize, 'descending').map((row) => row.name)).toEqual(['b', 'c', 'a']);
  });

  it('leaves the rows as given for a column without a comparison, and never changes its input', () => {
    expect(sortRows(rows, undefined, 'ascending')).toBe(rows);
    sortRows(rows, bySize, 'ascending');
    expect(rows.map((row) => row.name)).toEqual(['b', 'a', 'c']);
  });
});

describe('nextSort', () => {
  it('sorts a new column ascending, then turns it around, then back', () => {
    const first = nextSort(undefined, 'Size');
    expect(first).toEqual({ column: 'Size', direction: 'ascending' });
    const second = nextSort(first, 'Size');
    expect(second).toEqual({ column: 'Size', direction: 'descending' });
    expect(nextSort(second, 'Size')).toEqual({ column: 'Size', direction: 'ascending' });
    expect(nextSort(second, 'Name')).toEqual({ column: 'Name', direction: 'ascending' });
  });
});
