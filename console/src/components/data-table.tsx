import { memo, useState, type CSSProperties, type KeyboardEvent, type MouseEvent, type ReactNode } from 'react';
import { nextSort, sortRows, type TableSort } from './table-rows.js';

/** One column: its header, how a row fills its cell, and optionally its order, alignment and width. */
export interface Column<Row> {
  /** The header's text; in a `labelled-cards` table also each cell's label on a narrow screen. */
  header: string;
  /** The header is for screen readers only (a column of row actions). */
  hideHeader?: boolean;
  cell: (row: Row) => ReactNode;
  /** Classes of the column's body cells: `cell-wrap`, `mono`, `error-cell`, `row-links`. */
  className?: string;
  align?: 'start' | 'center' | 'end';
  /** A CSS width of the column (`8rem`, `20%`); the browser sizes it otherwise. */
  width?: string;
  /** Makes the column sortable: its header becomes a button that orders the rows by this. */
  compare?: (a: Row, b: Row) => number;
}

/**
 * On a narrow screen: `scroll` keeps the table and scrolls it sideways in its frame; `cards`
 * turns each row into a compact card (`stack-on-phone`); `labelled-cards` into a card with each
 * cell under its column's name (`stack`, the cells' `data-label`).
 */
export type NarrowLayout = 'scroll' | 'cards' | 'labelled-cards';

export interface DataTableProps<Row> {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string;
  /** Names the table for screen readers (a visually hidden caption). */
  caption?: string;
  narrow?: NarrowLayout;
  /** More classes of the table element (`runs`). */
  className?: string;
  /** Shown instead of the table when there are no rows; without it an empty table is shown. */
  empty?: ReactNode;
  /** Makes each row open something: a click on it (not on a control inside it), or Enter or Space while it has focus. */
  onRowActivate?: (row: Row) => void;
  /** The accessible name of an activatable row, said when it gets focus. */
  rowLabel?: (row: Row) => string;
  /** `data-*` attributes of a row, for styles or scripts that find it. */
  rowData?: (row: Row) => Record<`data-${string}`, string>;
  /** The order the table starts in; unsorted (as given) without it. */
  initialSort?: TableSort;
}

/** A cell's inline style: the column's alignment, and on its header its width; none without them. */
function styleOf<Row>(column: Column<Row>, header: boolean): CSSProperties | undefined {
  const style: CSSProperties = { ...(column.align ? { textAlign: column.align } : {}), ...(header && column.width ? { width: column.width } : {}) };
  return Object.keys(style).length > 0 ? style : undefined;
}

/** What a click or key inside a row that opens something must leave alone: its own controls. */
const CONTROLS = 'a, button, input, select, textarea, summary, label, [role="button"], [tabindex]';

/**
 * Whether an event that reached an activatable row came from a control inside it (a link, a
 * button, a copy button, the payload's disclosure) rather than from the row itself.
 */
function fromControlInside(target: EventTarget | null, row: Element): boolean {
  if (!(target instanceof Element)) return false;
  const control = target.closest(CONTROLS);
  return control !== null && control !== row && row.contains(control);
}

interface RowProps<Row> {
  row: Row;
  columns: readonly Column<Row>[];
  labelled: boolean;
  onRowActivate?: (row: Row) => void;
  rowLabel?: (row: Row) => string;
  rowData?: (row: Row) => Record<`data-${string}`, string>;
}

function DataRowOf<Row>({ row, columns, labelled, onRowActivate, rowLabel, rowData }: RowProps<Row>) {
  const activation = onRowActivate && {
    tabIndex: 0,
    className: 'row-activatable',
    'aria-label': rowLabel?.(row),
    onClick: (event: MouseEvent<HTMLTableRowElement>) => {
      if (!fromControlInside(event.target, event.currentTarget)) onRowActivate(row);
    },
    onKeyDown: (event: KeyboardEvent<HTMLTableRowElement>) => {
      if (event.target !== event.currentTarget || (event.key !== 'Enter' && event.key !== ' ')) return;
      event.preventDefault();
      onRowActivate(row);
    },
  };
  return (
    <tr {...rowData?.(row)} {...activation}>
      {columns.map((column) => (
        <td key={column.header} data-label={labelled ? column.header : undefined} className={column.className} style={styleOf(column, false)}>
          {column.cell(row)}
        </td>
      ))}
    </tr>
  );
}

/** Memoised: a page's own state changes (loading, a filter being typed) do not re-render rows whose row and columns did not change. */
const DataRow = memo(DataRowOf) as typeof DataRowOf;

/**
 * The console's one table: columns as data, a visually hidden caption, `th scope="col"`
 * headers, the narrow-screen layout, an empty state, and optionally sortable columns and rows
 * that open something.
 */
export function DataTable<Row>({ rows, columns, rowKey, caption, narrow = 'scroll', className, empty, onRowActivate, rowLabel, rowData, initialSort }: DataTableProps<Row>) {
  const [sort, setSort] = useState<TableSort | undefined>(initialSort);
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  const sortedBy = sort && columns.find((column) => column.header === sort.column);
  const shown = sort ? sortRows(rows, sortedBy?.compare, sort.direction) : rows;
  const classes = [className, narrow === 'cards' ? 'stack-on-phone' : narrow === 'labelled-cards' ? 'stack' : undefined].filter(Boolean).join(' ');
  return (
    <div className="table-wrap">
      <table className={classes || undefined}>
        {caption && <caption className="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column) => {
              const text = column.hideHeader ? <span className="visually-hidden">{column.header}</span> : column.header;
              const sorted = sortedBy === column ? sort?.direction : undefined;
              return (
                <th key={column.header} scope="col" aria-sort={sorted} style={styleOf(column, true)}>
                  {column.compare ? (
                    <button type="button" className="sort-button" onClick={() => setSort(nextSort(sort, column.header))}>
                      {text}
                      <span aria-hidden="true">{sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ' ↕'}</span>
                    </button>
                  ) : (
                    text
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {shown.map((row) => (
            <DataRow key={rowKey(row)} row={row} columns={columns} labelled={narrow === 'labelled-cards'} onRowActivate={onRowActivate} rowLabel={rowLabel} rowData={rowData} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The empty state of a list: what is missing in bold, then what to do about it. */
export function EmptyState({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="empty">
      <p>
        <strong>{title}</strong> {children}
      </p>
    </div>
  );
}
