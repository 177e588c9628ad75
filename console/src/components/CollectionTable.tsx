// A page of a collection as a table: the exact total as its heading, the rows, the pager; or the
// problem that stopped it loading, with a way to try again.
import type { ReactNode } from 'react';
import type { Loaded } from '../load.ts';
import { DataTable } from './DataTable.tsx';
import { FailureNotice } from './FailureNotice.tsx';
import { type PageMeta, Pager } from './Pager.tsx';

interface CollectionTableProps<T> {
  id: string;
  /** What one element is called, and many: ['order', 'orders']. */
  noun: [string, string];
  caption: string;
  columns: string[];
  loaded: Loaded<{ data: T[]; meta: PageMeta }>;
  row: (item: T) => ReactNode;
  onPage: (cursor: { after?: string; before?: string }) => void;
}

export function CollectionTable<T>({ id, noun, caption, columns, loaded, row, onPage }: CollectionTableProps<T>) {
  return (
    <>
      {loaded.failure ? <FailureNotice failure={loaded.failure} onRetry={loaded.reload} /> : null}
      {loaded.data ? (
        <section aria-labelledby={id} aria-busy={loaded.loading}>
          <h2 id={id}>
            {loaded.data.meta.total} {loaded.data.meta.total === 1 ? noun[0] : noun[1]}
          </h2>
          <DataTable caption={caption} columns={columns} rows={loaded.data.data.map(row)} />
          <Pager meta={loaded.data.meta} label={noun[1]} onPage={onPage} />
        </section>
      ) : loaded.loading ? (
        <p aria-busy="true">Loading {noun[1]}…</p>
      ) : null}
    </>
  );
}
