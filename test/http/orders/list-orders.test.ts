// GET /orders: the collection contract — envelope, Link, filters and sort. Paging and malformed
// parameters: list-orders-parameters; who sees what and exact totals: list-orders-visibility.
import { describe, test } from 'node:test';
import { pagingLinks } from '../../helpers/problems.ts';
import assert from 'node:assert/strict';
import type { OrderStatus } from '../../../src/orders/orders.rules.ts';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { EMPTY_FIRST_PAGE_META, readableMeta } from '../../helpers/paging.ts';
import { createOrderRow, idsOf, readStoredOrder } from './stored-orders.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';

const link = (path: string, query: string, rel: string) => `<${PUBLIC_URL}${path}?${query}>; rel="${rel}"`;

describe('GET /orders: envelope and headers', () => {
  test('200 with exactly {data, meta}, each order in the same shape as alone', async () => {
    const { user, token } = await createCustomer(t);
    const first = await createOrderRow(t.db, user.id, { total: 500, createdAt: '2026-01-01T10:00:00Z' });
    const second = await createOrderRow(t.db, user.id, { status: 'paid', total: 700, createdAt: '2026-01-02T10:00:00Z' });

    const res = await get(t, token, '/orders');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers.etag, undefined);
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.equal(pagingLinks(res), `${link('/orders', 'page=1', 'first')}, ${link('/orders', 'page=1', 'last')}`);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'meta']);
    assert.deepEqual(body, {
      data: [await readStoredOrder(t.db, first), await readStoredOrder(t.db, second)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual(body.data[0], {
      id: first,
      status: 'pending',
      customerId: user.id,
      total: 500,
      currency: 'EUR',
      createdAt: '2026-01-01T10:00:00.000Z',
      updatedAt: body.data[0]!.updatedAt,
    });
    assert.match(body.data[0]!.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const item of body.data) {
      const alone = await get(t, token, `/orders/${item.id}`);
      assert.deepEqual(alone.json(), item);
    }
  });

  test('an empty collection: total 0, totalPages 0, Link first and last to page 1', async () => {
    const { token } = await createCustomer(t);
    const res = await get(t, token, '/orders');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      data: [],
      meta: EMPTY_FIRST_PAGE_META,
    });
    assert.equal(pagingLinks(res), `${link('/orders', 'page=1', 'first')}, ${link('/orders', 'page=1', 'last')}`);
  });

  test('/v1/orders answers the same collection, its links under /v1', async () => {
    const { user, token } = await createCustomer(t);
    await createOrderRow(t.db, user.id);
    await createOrderRow(t.db, user.id);
    const [plain, versioned] = [await get(t, token, '/orders?pageSize=1'), await get(t, token, '/v1/orders?pageSize=1')];
    assert.equal(versioned.statusCode, 200);
    assert.deepEqual(versioned.json(), plain.json());
    assert.equal(versioned.headers['content-type'], JSON_TYPE);
    assert.equal(versioned.headers['cache-control'], 'private, no-cache');
    assert.equal(versioned.headers.vary, 'Accept');
    assert.equal(
      pagingLinks(versioned),
      [
        link('/v1/orders', 'pageSize=1&page=1', 'first'),
        link('/v1/orders', `pageSize=1&after=${versioned.json().meta.nextCursor}`, 'next'),
        link('/v1/orders', 'pageSize=1&page=2', 'last'),
      ].join(', '),
    );
  });

  test('the vendor media type in Accept is answered in kind', async () => {
    const { user, token } = await createCustomer(t);
    await createOrderRow(t.db, user.id);
    const res = await get(t, token, '/orders', { accept: 'application/vnd.orderpay.v1+json' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/vnd.orderpay.v1+json; charset=utf-8');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.json().meta.total, 1);
  });

  test('Link: first and last by page, prev and next by cursor, keeping every other parameter as sent', async () => {
    const { user, token } = await createCustomer(t);
    const made: number[] = [];
    for (let i = 1; i <= 5; i++) made.push(await createOrderRow(t.db, user.id, { total: i * 100 }));
    /** The cursor's content for the order of total `total`: sort -total,createdAt then -id, and its place. */
    const at = async (total: number, n: number) => {
      const order = await readStoredOrder(t.db, made[total / 100 - 1]!);
      return { v: [total, order.createdAt, order.id], n };
    };
    const filters = 'status=pending&sort=-total%2CcreatedAt&pageSize=2';
    const q = (page: number) => `${filters}&page=${page}`;

    const middle = await get(t, token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=2`);
    assert.equal(middle.statusCode, 200);
    const meta = middle.json().meta;
    assert.deepEqual(readableMeta(meta), {
      ...{ total: 5, page: 2, pageSize: 2, totalPages: 3 },
      ...{ nextCursor: await at(200, 3), prevCursor: await at(300, 2) },
    });
    assert.deepEqual(
      middle.json().data.map((o: { total: number }) => o.total),
      [300, 200],
    );
    assert.equal(
      pagingLinks(middle),
      [
        link('/orders', q(1), 'first'),
        link('/orders', `${filters}&before=${meta.prevCursor}`, 'prev'),
        link('/orders', `${filters}&after=${meta.nextCursor}`, 'next'),
        link('/orders', q(3), 'last'),
      ].join(', '),
    );

    const first = await get(t, token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=1`);
    assert.deepEqual(readableMeta(first.json().meta).prevCursor, null);
    assert.equal(
      pagingLinks(first),
      [
        link('/orders', q(1), 'first'),
        link('/orders', `${filters}&after=${first.json().meta.nextCursor}`, 'next'),
        link('/orders', q(3), 'last'),
      ].join(', '),
    );
    assert.deepEqual(
      first.json().data.map((o: { total: number }) => o.total),
      [500, 400],
    );

    const last = await get(t, token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=3`);
    assert.deepEqual(readableMeta(last.json().meta).nextCursor, null);
    assert.equal(
      pagingLinks(last),
      [
        link('/orders', q(1), 'first'),
        link('/orders', `${filters}&before=${last.json().meta.prevCursor}`, 'prev'),
        link('/orders', q(3), 'last'),
      ].join(', '),
    );
    assert.deepEqual(
      last.json().data.map((o: { total: number }) => o.total),
      [100],
    );

    const beyond = await get(t, token, `/orders?status=pending&sort=-total,createdAt&pageSize=2&page=9`);
    assert.equal(beyond.statusCode, 200);
    assert.deepEqual(beyond.json(), {
      data: [],
      meta: { total: 5, page: 9, pageSize: 2, totalPages: 3, nextCursor: null, prevCursor: null },
    });
    assert.equal(
      pagingLinks(beyond),
      [link('/orders', q(1), 'first'), link('/orders', q(3), 'prev'), link('/orders', q(3), 'last')].join(', '),
    );

    const noPage = await get(t, token, '/orders?pageSize=2');
    assert.equal(
      pagingLinks(noPage),
      [
        link('/orders', 'pageSize=2&page=1', 'first'),
        link('/orders', `pageSize=2&after=${noPage.json().meta.nextCursor}`, 'next'),
        link('/orders', 'pageSize=2&page=3', 'last'),
      ].join(', '),
    );
  });
});

describe('GET /orders: filters', () => {
  test('status alone, for every status', async () => {
    const { user, token } = await createCustomer(t);
    const byStatus = new Map<OrderStatus, number>();
    for (const status of ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const)
      byStatus.set(status, await createOrderRow(t.db, user.id, { status }));
    for (const [status, id] of byStatus) {
      const res = await get(t, token, `/orders?status=${status}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        data: [await readStoredOrder(t.db, id)],
        meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
      });
    }
  });

  test("customerId alone (staff): only that customer's orders", async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const a1 = await createOrderRow(t.db, a.user.id);
    const a2 = await createOrderRow(t.db, a.user.id, { status: 'shipped' });
    await createOrderRow(t.db, b.user.id);
    const res = await get(t, await createStaffToken(t), `/orders?customerId=${a.user.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      data: [await readStoredOrder(t.db, a1), await readStoredOrder(t.db, a2)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
  });

  test('customerId of a customer without orders (or no such user): empty, not an error', async () => {
    const { user } = await createCustomer(t);
    const staff = await createStaffToken(t);
    for (const id of [user.id, 987654321]) {
      const res = await get(t, staff, `/orders?customerId=${id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        data: [],
        meta: EMPTY_FIRST_PAGE_META,
      });
    }
  });

  test('minTotal alone: total ≥ minTotal, the bound included', async () => {
    const { user, token } = await createCustomer(t);
    await createOrderRow(t.db, user.id, { total: 999 });
    const exact = await createOrderRow(t.db, user.id, { total: 1000 });
    const above = await createOrderRow(t.db, user.id, { total: 1001 });
    const res = await get(t, token, '/orders?minTotal=1000');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      data: [await readStoredOrder(t.db, exact), await readStoredOrder(t.db, above)],
      meta: { total: 2, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.deepEqual(idsOf(await get(t, token, '/orders?minTotal=0')).length, 3);
    assert.deepEqual(idsOf(await get(t, token, '/orders?minTotal=1002')), []);
  });

  test('status, customerId and minTotal combined', async () => {
    const a = await createCustomer(t);
    const b = await createCustomer(t);
    const match = await createOrderRow(t.db, a.user.id, { status: 'paid', total: 5000 });
    await createOrderRow(t.db, a.user.id, { status: 'paid', total: 4999 });
    await createOrderRow(t.db, a.user.id, { status: 'pending', total: 9000 });
    await createOrderRow(t.db, b.user.id, { status: 'paid', total: 9000 });
    const staff = await createStaffToken(t);

    const all = await get(t, staff, `/orders?status=paid&customerId=${a.user.id}&minTotal=5000`);
    assert.equal(all.statusCode, 200);
    assert.deepEqual(all.json(), {
      data: [await readStoredOrder(t.db, match)],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null },
    });
    assert.equal((await get(t, staff, `/orders?status=paid&customerId=${a.user.id}`)).json().meta.total, 2);
    assert.equal((await get(t, staff, `/orders?customerId=${a.user.id}&minTotal=5000`)).json().meta.total, 2);
    assert.equal((await get(t, a.token, '/orders?status=paid&minTotal=5000')).json().meta.total, 1);
  });
});

describe('GET /orders: sort', () => {
  // Creation times chosen so that c and d tie on createdAt and b and c tie on total.
  async function sortFixture() {
    const { user, token } = await createCustomer(t);
    const a = await createOrderRow(t.db, user.id, { status: 'pending', total: 500, createdAt: '2026-03-03T00:00:00Z' });
    const b = await createOrderRow(t.db, user.id, { status: 'paid', total: 1500, createdAt: '2026-03-01T00:00:00Z' });
    const c = await createOrderRow(t.db, user.id, { status: 'pending', total: 1500, createdAt: '2026-03-02T00:00:00Z' });
    const d = await createOrderRow(t.db, user.id, { status: 'shipped', total: 200, createdAt: '2026-03-02T00:00:00Z' });
    return { token, a, b, c, d };
  }

  test('default: createdAt ascending, id breaking ties', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(idsOf(await get(t, token, '/orders')), [b, c, d, a]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=createdAt')), [b, c, d, a]);
  });

  test('-createdAt: descending, the id tie-breaker descending with it', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=-createdAt')), [a, d, c, b]);
  });

  test('several keys apply in the order written', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=status,-total')), [b, c, a, d]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=-total,createdAt')), [b, c, a, d]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=-total,-createdAt')), [c, b, a, d]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=createdAt,-status')), [b, d, c, a]);
  });

  test("total ties are broken by id in the first key's direction", async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=total')), [d, a, b, c]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=-total')), [c, b, a, d]);
  });

  test('id and -id', async () => {
    const { token, a, b, c, d } = await sortFixture();
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=id')), [a, b, c, d]);
    assert.deepEqual(idsOf(await get(t, token, '/orders?sort=-id')), [d, c, b, a]);
  });

  test('pages of a sort with ties neither repeat nor skip an order', async () => {
    const { user, token } = await createCustomer(t);
    const created: number[] = [];
    for (let i = 0; i < 7; i++) created.push(await createOrderRow(t.db, user.id, { createdAt: '2026-04-01T00:00:00Z' }));
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) seen.push(...idsOf(await get(t, token, `/orders?sort=createdAt&pageSize=2&page=${page}`)));
    assert.deepEqual(seen, created);
  });
});
