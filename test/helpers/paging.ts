// Reading what a collection page says about its neighbours: its cursors' payloads (readable by
// anyone; only the server can make one that verifies) and the pages they lead to.
import assert from 'node:assert/strict';
import type { CollectionMeta } from '../../src/core/paging.ts';

/** The meta of an empty collection's first page at the default page size: no rows, no cursors. */
export const EMPTY_FIRST_PAGE_META: CollectionMeta = { total: 0, page: 1, pageSize: 20, totalPages: 0, nextCursor: null, prevCursor: null };

const CURSOR = /^([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]{22}$/;

/** What a cursor names: the sort-key values of its row, in sort order, and the number of rows before that row. */
export interface CursorContent {
  v: (string | number)[];
  n: number;
}

export function readCursor(cursor: string | null): CursorContent | null {
  if (cursor === null) return null;
  const payload = CURSOR.exec(cursor)?.[1];
  assert.ok(payload, `${cursor} is not a cursor`);
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorContent;
}

type Meta = CollectionMeta;

/** meta with each cursor replaced by what it names, to compare whole. */
export function readableMeta(meta: Meta): Omit<Meta, 'nextCursor' | 'prevCursor'> & {
  nextCursor: CursorContent | null;
  prevCursor: CursorContent | null;
} {
  return { ...meta, nextCursor: readCursor(meta.nextCursor), prevCursor: readCursor(meta.prevCursor) };
}
