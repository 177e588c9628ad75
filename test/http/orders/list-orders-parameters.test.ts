// GET /orders: the bounds of paging, and every malformed query parameter refused with a 400 that
// names it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode } from '../../../src/core/errors.ts';
import { createCustomer, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { createOrderRow, idsOf, readStoredOrder } from './stored-orders.ts';

const t = setUpTestApp();

describe('GET /orders: paging bounds', () => {
  test('pageSize 1 and 100, page 1 000 000 are accepted', async () => {
    const { user, token } = await createCustomer(t);
    const first = await createOrderRow(t.db, user.id, { createdAt: '2026-05-01T00:00:00Z' });
    const second = await createOrderRow(t.db, user.id, { createdAt: '2026-05-02T00:00:00Z' });
    const one = await get(t, token, '/orders?pageSize=1&page=2');
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json().data, [await readStoredOrder(t.db, second)]);
    const { createdAt } = await readStoredOrder(t.db, second);
    assert.deepEqual(readableMeta(one.json().meta), {
      ...{ total: 2, page: 2, pageSize: 1, totalPages: 2 },
      ...{ nextCursor: null, prevCursor: { v: [createdAt, second], n: 1 } },
    });
    const hundred = await get(t, token, '/orders?pageSize=100');
    assert.deepEqual(hundred.json().meta, { total: 2, page: 1, pageSize: 100, totalPages: 1, nextCursor: null, prevCursor: null });
    assert.deepEqual(idsOf(hundred), [first, second]);
    const far = await get(t, token, '/orders?page=1000000');
    assert.equal(far.statusCode, 200);
    assert.deepEqual(far.json(), {
      data: [],
      meta: { total: 2, page: 1000000, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
  });
});

describe('GET /orders: malformed parameters → 400 naming the parameter', () => {
  const invalid = (parameter: string, detail: string) => ({
    code: 'REQUEST_PARAMETER_INVALID' as const,
    parameter,
    detail: `query parameter "${parameter}" ${detail}`,
  });
  const cases: [query: string, expected: { code: ErrorCode; parameter: string; detail: string }][] = [
    ['status=unknown', invalid('status', 'must be equal to one of the allowed values')],
    ['status=PENDING', invalid('status', 'must be equal to one of the allowed values')],
    ['status=', invalid('status', 'must be equal to one of the allowed values')],
    ['customerId=abc', invalid('customerId', 'must be integer')],
    ['customerId=0', invalid('customerId', 'must be >= 1')],
    ['customerId=-3', invalid('customerId', 'must be >= 1')],
    ['customerId=1.5', invalid('customerId', 'must be integer')],
    ['customerId=9007199254740992', invalid('customerId', 'must be <= 9007199254740991')],
    ['minTotal=abc', invalid('minTotal', 'must be integer')],
    ['minTotal=-1', invalid('minTotal', 'must be >= 0')],
    ['minTotal=10.5', invalid('minTotal', 'must be integer')],
    ['minTotal=', invalid('minTotal', 'must be integer')],
    ['minTotal=0x10', invalid('minTotal', 'must be integer')],
    ['minTotal=1e3', invalid('minTotal', 'must be integer')],
    ['page=0', invalid('page', 'must be >= 1')],
    ['page=-1', invalid('page', 'must be >= 1')],
    ['page=1000001', invalid('page', 'must be <= 1000000')],
    ['page=two', invalid('page', 'must be integer')],
    ['page=%201', invalid('page', 'must be integer')],
    ['pageSize=0', invalid('pageSize', 'must be >= 1')],
    ['pageSize=101', invalid('pageSize', 'must be <= 100')],
    ['pageSize=2.5', invalid('pageSize', 'must be integer')],
    ['sort=', { code: 'REQUEST_PARAMETER_INVALID', parameter: 'sort', detail: 'sort has an empty key' }],
    ['sort=status,', { code: 'REQUEST_PARAMETER_INVALID', parameter: 'sort', detail: 'sort has an empty key' }],
    [
      'sort=customerId',
      {
        code: 'QUERY_UNKNOWN_SORT_KEY',
        parameter: 'sort',
        detail: '"customerId" is not a sort key of this collection; use createdAt, status, total, id',
      },
    ],
    [
      'sort=-updatedAt',
      {
        code: 'QUERY_UNKNOWN_SORT_KEY',
        parameter: 'sort',
        detail: '"updatedAt" is not a sort key of this collection; use createdAt, status, total, id',
      },
    ],
    ['sort=status,-status', { code: 'QUERY_DUPLICATE_SORT_KEY', parameter: 'sort', detail: '"status" appears more than once in sort' }],
    ['sort=id,createdAt,id', { code: 'QUERY_DUPLICATE_SORT_KEY', parameter: 'sort', detail: '"id" appears more than once in sort' }],
    ['status=pending&status=paid', invalid('status', 'may appear only once')],
    ['customerId=1&customerId=1', invalid('customerId', 'may appear only once')],
    ['page=1&page=1', invalid('page', 'may appear only once')],
    ['sort=id&sort=total', invalid('sort', 'may appear only once')],
    [
      'total=100',
      { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'total', detail: 'query parameter "total" is not supported by this collection' },
    ],
    [
      'maxTotal=100',
      { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'maxTotal', detail: 'query parameter "maxTotal" is not supported by this collection' },
    ],
    [
      'Status=pending',
      { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'Status', detail: 'query parameter "Status" is not supported by this collection' },
    ],
    [
      'offset=20',
      { code: 'QUERY_UNKNOWN_PARAMETER', parameter: 'offset', detail: 'query parameter "offset" is not supported by this collection' },
    ],
  ];
  for (const [query, expected] of cases) {
    test(`${query} → 400 ${expected.code} (${expected.parameter})`, async () => {
      const { token } = await createCustomer(t);
      const res = await get(t, token, `/orders?${query}`);
      // The sort parser words its own detail as a sentence.
      const detail = expected.detail === 'sort has an empty key' ? 'sort has an empty key.' : expected.detail;
      expectProblem(res, 400, expected.code, '/orders', detail, { errors: [{ detail: expected.detail, parameter: expected.parameter }] });
    });
  }

  test('every malformed parameter is named, not only the first', async () => {
    const { token } = await createCustomer(t);
    const res = await get(t, token, '/orders?status=nope&pageSize=0');
    const errors = [
      { detail: 'query parameter "status" must be equal to one of the allowed values', parameter: 'status' },
      { detail: 'query parameter "pageSize" must be >= 1', parameter: 'pageSize' },
    ];
    expectProblem(res, 400, 'REQUEST_PARAMETER_INVALID', '/orders', errors.map((e) => e.detail).join('; '), { errors });
  });

  test('an unknown parameter is refused even beside valid ones', async () => {
    const { token } = await createCustomer(t);
    const res = await get(t, token, '/orders?status=pending&color=red&size=9');
    const errors = [
      { detail: 'query parameter "color" is not supported by this collection', parameter: 'color' },
      { detail: 'query parameter "size" is not supported by this collection', parameter: 'size' },
    ];
    expectProblem(res, 400, 'QUERY_UNKNOWN_PARAMETER', '/orders', errors.map((e) => e.detail).join('; '), { errors });
  });
});
