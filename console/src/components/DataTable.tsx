// A table of rows under one header row: every table of the console. The caption names it for
// assistive technology (and is shown when asked); a table of its own section scrolls sideways in a
// box of its own on a narrow screen; `empty` stands in a row of its own when there are no rows.
import type { ReactNode } from 'react';

interface DataTableProps {
  caption: ReactNode;
  /** Shown above the table; otherwise read by assistive technology only. */
  showCaption?: boolean;
  columns: readonly string[];
  rows: ReactNode[];
  /** The one row when there are none. */
  empty?: ReactNode;
  className?: string;
  /** In a box that scrolls sideways (default); false for a table inside a panel or a row. */
  scroll?: boolean;
}

export function DataTable({ caption, showCaption = false, columns, rows, empty, className, scroll = true }: DataTableProps) {
  const table = (
    <table className={className}>
      <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && empty !== undefined ? (
          <tr>
            <td colSpan={columns.length}>{empty}</td>
          </tr>
        ) : (
          rows
        )}
      </tbody>
    </table>
  );
  return scroll ? <div className="overflow-auto">{table}</div> : table;
}
