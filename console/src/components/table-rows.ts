/** A table's order: the header of the column it is sorted by, and which way. */
export interface TableSort {
  column: string;
  direction: 'ascending' | 'descending';
}

/**
 * The rows in the order `sort` asks for, by that column's comparison; as given when the table
 * is unsorted or the column has none. Stable: rows that compare equal keep their order.
 */
export function sortRows<Row>(rows: readonly Row[], compare: ((a: Row, b: Row) => number) | undefined, direction: TableSort['direction']): readonly Row[] {
  if (!compare) return rows;
  const sign = direction === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => sign * compare(a, b));
}

/** The order after a click on a sortable column's header: ascending first, then the other way. */
export function nextSort(current: TableSort | undefined, column: string): TableSort {
  return current?.column === column && current.direction === 'ascending' ? { column, direction: 'descending' } : { column, direction: 'ascending' };
}
