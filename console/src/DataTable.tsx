import type { ReactNode } from 'react';

/**
 * A table of the console: a keyboard-scrollable region named by `label` (narrow screens scroll it
 * sideways), its column heads, and the rows given as children.
 */
export function DataTable({
  label,
  className,
  columns,
  children,
}: {
  label: string;
  className?: string;
  columns: readonly string[];
  children: ReactNode;
}) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table className={className}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
