// Collections, pure parts: the sort parameter, the page asked for and the {data, meta} envelope.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCursorCodec } from '../../src/core/cursor.ts';
import { pageOf, parseSortParam, planPage, toCollection, type SortKey } from '../../src/core/paging.ts';
import { DomainError } from '../../src/core/errors.ts';

const KEYS = ['createdAt', 'status', 'total', 'id'] as const;
type Key = (typeof KEYS)[number];
const FALLBACK: SortKey<Key>[] = [{ field: 'createdAt', descending: false }];

const asc = (field: Key): SortKey<Key> => ({ field, descending: false });
const desc = (field: Key): SortKey<Key> => ({ field, descending: true });

function assertProblem(fn: () => unknown, code: string, detail: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, code);
    assert.equal(error.status, 400);
    assert.equal(error.detail, detail);
    assert.deepEqual(error.options, { errors: [{ parameter: 'sort', detail }] });
    return true;
  });
}

describe('parseSortParam', () => {
  test('absent: the fallback, then id as tie-breaker', () => {
    assert.deepEqual(parseSortParam(undefined, KEYS, FALLBACK), [asc('createdAt'), asc('id')]);
  });

  test('does not modify the fallback it is given', () => {
    const fallback = [asc('createdAt')];
    parseSortParam(undefined, KEYS, fallback);
    assert.deepEqual(fallback, [asc('createdAt')]);
  });

  test('one key, ascending', () => {
    assert.deepEqual(parseSortParam('status', KEYS, FALLBACK), [asc('status'), asc('id')]);
  });

  test('"-" sorts descending; the id tie-breaker follows the first key\'s direction', () => {
    assert.deepEqual(parseSortParam('-createdAt', KEYS, FALLBACK), [desc('createdAt'), desc('id')]);
    assert.deepEqual(parseSortParam('-total,status', KEYS, FALLBACK), [desc('total'), asc('status'), desc('id')]);
    assert.deepEqual(parseSortParam('total,-status', KEYS, FALLBACK), [asc('total'), desc('status'), asc('id')]);
  });

  test('keys are kept in the order written', () => {
    assert.deepEqual(parseSortParam('status,-createdAt,total', KEYS, FALLBACK), [
      asc('status'),
      desc('createdAt'),
      asc('total'),
      asc('id'),
    ]);
    assert.deepEqual(parseSortParam('total,status,createdAt', KEYS, FALLBACK), [asc('total'), asc('status'), asc('createdAt'), asc('id')]);
  });

  test('id named explicitly is not appended again, wherever it stands', () => {
    assert.deepEqual(parseSortParam('id', KEYS, FALLBACK), [asc('id')]);
    assert.deepEqual(parseSortParam('-id', KEYS, FALLBACK), [desc('id')]);
    assert.deepEqual(parseSortParam('id,status', KEYS, FALLBACK), [asc('id'), asc('status')]);
    assert.deepEqual(parseSortParam('status,-id', KEYS, FALLBACK), [asc('status'), desc('id')]);
  });

  test('no tie-breaker when the collection has no id key', () => {
    assert.deepEqual(parseSortParam('name', ['name', 'price'] as const, [{ field: 'name', descending: false }]), [
      { field: 'name', descending: false },
    ]);
    assert.deepEqual(parseSortParam(undefined, ['name', 'price'] as const, [{ field: 'price', descending: true }]), [
      { field: 'price', descending: true },
    ]);
  });

  test('unknown key → QUERY_UNKNOWN_SORT_KEY naming it and the keys allowed', () => {
    assertProblem(
      () => parseSortParam('amount', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '"amount" is not a sort key of this collection; use createdAt, status, total, id',
    );
    assertProblem(
      () => parseSortParam('status,-customerId', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '"customerId" is not a sort key of this collection; use createdAt, status, total, id',
    );
  });

  test('keys are case-sensitive and not trimmed', () => {
    assertProblem(
      () => parseSortParam('CreatedAt', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '"CreatedAt" is not a sort key of this collection; use createdAt, status, total, id',
    );
    assertProblem(
      () => parseSortParam('status, total', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '" total" is not a sort key of this collection; use createdAt, status, total, id',
    );
    assertProblem(
      () => parseSortParam('+total', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '"+total" is not a sort key of this collection; use createdAt, status, total, id',
    );
    assertProblem(
      () => parseSortParam('--total', KEYS, FALLBACK),
      'QUERY_UNKNOWN_SORT_KEY',
      '"-total" is not a sort key of this collection; use createdAt, status, total, id',
    );
  });

  test('duplicate key → QUERY_DUPLICATE_SORT_KEY, whatever the directions', () => {
    assertProblem(
      () => parseSortParam('status,status', KEYS, FALLBACK),
      'QUERY_DUPLICATE_SORT_KEY',
      '"status" appears more than once in sort',
    );
    assertProblem(
      () => parseSortParam('status,-status', KEYS, FALLBACK),
      'QUERY_DUPLICATE_SORT_KEY',
      '"status" appears more than once in sort',
    );
    assertProblem(
      () => parseSortParam('-total,createdAt,total', KEYS, FALLBACK),
      'QUERY_DUPLICATE_SORT_KEY',
      '"total" appears more than once in sort',
    );
    assertProblem(() => parseSortParam('id,-id', KEYS, FALLBACK), 'QUERY_DUPLICATE_SORT_KEY', '"id" appears more than once in sort');
  });

  for (const raw of ['', ',', '-', 'status,', ',status', 'status,,total', 'status,-']) {
    test(`empty key in ${JSON.stringify(raw)} → REQUEST_PARAMETER_INVALID`, () => {
      assert.throws(
        () => parseSortParam(raw, KEYS, FALLBACK),
        (error: unknown) => {
          assert.ok(error instanceof DomainError);
          assert.equal(error.code, 'REQUEST_PARAMETER_INVALID');
          assert.equal(error.status, 400);
          assert.equal(error.detail, 'sort has an empty key.');
          assert.deepEqual(error.options, { errors: [{ parameter: 'sort', detail: 'sort has an empty key' }] });
          return true;
        },
      );
    });
  }
});

describe('toCollection', () => {
  const codec = createCursorCodec(Buffer.alloc(32, 7));
  const SORT: SortKey<'id'>[] = [{ field: 'id', descending: false }];
  const planOf = (position: { page?: number; after?: string; before?: string }, pageSize: number) =>
    planPage(pageOf({ ...position, pageSize }, codec), 'things', {}, SORT);
  /** The position a cursor of this page carries (verified as the collection verifies it). */
  const positionOf = (cursor: string | null) => (cursor === null ? null : codec.verify(JSON.stringify(['things', [], ['id']]), cursor));

  const cases: [total: number, page: number, pageSize: number, totalPages: number][] = [
    [0, 1, 20, 0],
    [1, 1, 20, 1],
    [20, 1, 20, 1],
    [21, 2, 20, 2],
    [45, 3, 20, 3],
    [100, 1, 100, 1],
    [101, 7, 100, 2],
    [5, 1, 1, 5],
  ];
  for (const [total, page, pageSize, totalPages] of cases) {
    test(`total ${total}, pageSize ${pageSize}, page ${page} → ${totalPages} pages`, () => {
      const data = [{ id: 1 }, { id: 2 }];
      const more = (page - 1) * pageSize + data.length < total;
      const collection = toCollection({ rows: data, total, more }, planOf({ page }, pageSize));
      assert.deepEqual(Object.keys(collection), ['data', 'meta']);
      assert.deepEqual(Object.keys(collection.meta), ['total', 'page', 'pageSize', 'totalPages', 'nextCursor', 'prevCursor']);
      const { nextCursor, prevCursor, ...numbers } = collection.meta;
      assert.deepEqual(collection.data, [{ id: 1 }, { id: 2 }]);
      assert.deepEqual(numbers, { total, page, pageSize, totalPages });
      // Cursors from the page's last and first rows, n their place in the whole collection.
      assert.deepEqual(positionOf(nextCursor), more ? { values: [2], n: (page - 1) * pageSize + 1 } : null);
      assert.deepEqual(positionOf(prevCursor), page > 1 ? { values: [1], n: (page - 1) * pageSize } : null);
    });
  }

  test('the data array is passed through as given', () => {
    const data = [{ id: 3 }];
    assert.equal(toCollection({ rows: data, total: 1, more: false }, planOf({ page: 1 }, 20)).data, data);
  });

  test('a page beyond the last: no element, no cursor', () => {
    const collection = toCollection({ rows: [], total: 3, more: false }, planOf({ page: 9 }, 2));
    assert.deepEqual(collection.meta, { total: 3, page: 9, pageSize: 2, totalPages: 2, nextCursor: null, prevCursor: null });
  });

  test('after a cursor: the page number follows from the row it names; prev is always there, next when more', () => {
    const after = codec.sign(JSON.stringify(['things', [], ['id']]), { values: [40], n: 39 });
    const rows = [{ id: 41 }, { id: 42 }];
    const middle = toCollection({ rows, total: 100, more: true }, planOf({ after }, 2));
    assert.equal(middle.meta.page, 21);
    assert.deepEqual(positionOf(middle.meta.nextCursor), { values: [42], n: 41 });
    assert.deepEqual(positionOf(middle.meta.prevCursor), { values: [41], n: 40 });
    const end = toCollection({ rows, total: 42, more: false }, planOf({ after }, 2));
    assert.equal(end.meta.nextCursor, null);
    assert.notEqual(end.meta.prevCursor, null);
  });

  test('before a cursor: the page ending at its row; next is always there, prev when more', () => {
    const before = codec.sign(JSON.stringify(['things', [], ['id']]), { values: [41], n: 40 });
    const rows = [{ id: 39 }, { id: 40 }];
    const middle = toCollection({ rows, total: 100, more: true }, planOf({ before }, 2));
    assert.equal(middle.meta.page, 20);
    assert.deepEqual(positionOf(middle.meta.nextCursor), { values: [40], n: 39 });
    assert.deepEqual(positionOf(middle.meta.prevCursor), { values: [39], n: 38 });
    const start = toCollection({ rows, total: 100, more: false }, planOf({ before }, 2));
    assert.equal(start.meta.prevCursor, null);
  });
});

describe('pageOf', () => {
  const codec = createCursorCodec(Buffer.alloc(32, 7));

  test('defaults: page 1 of 20', () => {
    assert.deepEqual(pageOf({}, codec), { pageSize: 20, position: { page: 1 }, cursors: codec });
    assert.deepEqual(pageOf({ after: 'a.b', pageSize: 5 }, codec), { pageSize: 5, position: { after: 'a.b' }, cursors: codec });
    assert.deepEqual(pageOf({ before: 'a.b' }, codec), { pageSize: 20, position: { before: 'a.b' }, cursors: codec });
  });

  const refusals: [query: { page?: number; after?: string; before?: string }, parameter: string, detail: string][] = [
    [{ page: 2, after: 'a.b' }, 'page', 'page cannot be combined with after: a cursor names the page'],
    [{ page: 1, before: 'a.b' }, 'page', 'page cannot be combined with before: a cursor names the page'],
    [{ after: 'a.b', before: 'a.b' }, 'before', 'after and before cannot be combined'],
  ];
  for (const [query, parameter, detail] of refusals) {
    test(`${Object.keys(query).join(' + ')} → REQUEST_PARAMETER_INVALID naming ${parameter}`, () => {
      assert.throws(
        () => pageOf(query, codec),
        (error: unknown) => {
          assert.ok(error instanceof DomainError);
          assert.equal(error.code, 'REQUEST_PARAMETER_INVALID');
          assert.equal(error.detail, `${detail}.`);
          assert.deepEqual(error.options, { errors: [{ parameter, detail }] });
          return true;
        },
      );
    });
  }
});
