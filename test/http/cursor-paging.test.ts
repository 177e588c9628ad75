// Keyset paging on every collection (docs/api.md, "Paging"): following nextCursor (the next link)
// lists every element once, in the collection's order, the pages numbered 1, 2, …; prevCursor (the
// prev link) walks back through the same pages; in v1 and v2 alike. A cursor is refused with
// QUERY_CURSOR_INVALID when altered, cut, or given to another collection, other filters, another
// sort or another customer; and a row added or removed between two pages neither repeats nor
// hides another.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createCursorCodec } from '../../src/core/cursor.ts';
import { insertOrder, insertOrderItems } from '../../src/orders/orders.store.ts';
import { createCustomer, createStaffToken, get } from '../helpers/actors.ts';
import { ALL_SCOPES, PUBLIC_URL, setUpTestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';
import { readCursor } from '../helpers/paging.ts';
import { expectProblem, pagingLinks } from '../helpers/problems.ts';
import { insertWebhookEndpoint } from '../helpers/webhooks.ts';
import { databaseNow } from './events/events.ts';
import { createOrderRow } from './orders/stored-orders.ts';
import { makePayment, makeRefund } from './payments/payments.ts';
import { PUBLIC_URL_LITERAL, registerEndpoint, webhookTestConfig } from './webhooks/webhooks.ts';

// No webhook is sent during the run: the delivery log stays as the fixtures leave it.
const t = setUpTestApp(webhookTestConfig());
const PAGE_SIZE = 3;

interface Page {
  data: { id: number | string }[];
  meta: { total: number; page: number; pageSize: number; totalPages: number; nextCursor: string | null; prevCursor: string | null };
}

/** The paging relations of a Link header, rel → URL. */
function linksOf(res: LightMyRequestResponse): Record<string, string> {
  const links: Record<string, string> = {};
  for (const part of (pagingLinks(res) ?? '').split(', ')) {
    const [, url, rel] = /^<([^>]+)>; rel="([a-z]+)"$/.exec(part) ?? [];
    if (url && rel) links[rel] = url;
  }
  return links;
}

/** The URL the server links to for a page beside this one: the query as sent, page dropped, the cursor added. */
function besideUrl(path: string, query: string, name: 'after' | 'before', cursor: string): string {
  const params = new URLSearchParams(query);
  params.delete('page');
  params.set(name, cursor);
  return `${PUBLIC_URL}${path}?${params}`;
}

async function page(token: string, url: string): Promise<{ res: LightMyRequestResponse; body: Page }> {
  const res = await get(t, token, url.startsWith(PUBLIC_URL) ? url.slice(PUBLIC_URL.length) : url);
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return { res, body: res.json() };
}

/**
 * Walks path?query from page 1 by its next links to the end, then back by its prev links: the
 * elements once each, in the order one page of them all lists them; every page the same both ways.
 */
async function walkBothWays(token: string, path: string, query: string, pageSize = PAGE_SIZE): Promise<Page[]> {
  const all = (await page(token, `${path}?${query}&pageSize=100`)).body.data;
  assert.ok(all.length > 2 * pageSize, `${path}?${query}: ${all.length} elements are too few to walk`);
  const sized = `${query}&pageSize=${pageSize}`;
  const forward: { res: LightMyRequestResponse; body: Page }[] = [await page(token, `${path}?${sized}`)];
  for (;;) {
    const { res, body } = forward.at(-1)!;
    assert.equal(body.meta.page, forward.length, `${path}?${query}: page numbers follow the cursors`);
    assert.equal(body.meta.total, all.length);
    const { next, prev } = linksOf(res);
    assert.equal(prev, body.meta.prevCursor === null ? undefined : besideUrl(path, sized, 'before', body.meta.prevCursor));
    if (body.meta.nextCursor === null) {
      assert.equal(next, undefined);
      break;
    }
    assert.equal(next, besideUrl(path, sized, 'after', body.meta.nextCursor));
    forward.push(await page(token, next!));
  }
  assert.equal(forward.length, Math.ceil(all.length / pageSize));
  assert.deepEqual(
    forward.flatMap((p) => p.body.data),
    all,
    `${path}?${query}: the pages by cursor list every element once, in order`,
  );
  // Back from the last page by the prev links: the same pages, the same links.
  let current = forward.at(-1)!;
  for (let i = forward.length - 2; i >= 0; i--) {
    current = await page(token, linksOf(current.res).prev!);
    assert.deepEqual(current.body, forward[i]!.body, `${path}?${query}: page ${i + 1} walking back`);
    assert.equal(pagingLinks(current.res), pagingLinks(forward[i]!.res));
  }
  assert.equal(linksOf(current.res).prev, undefined);
  return forward.map((p) => p.body);
}

/** Whether a and b are in the order of these keys ("-" descending), compared as the database does. */
function inOrder(a: Record<string, unknown>, b: Record<string, unknown>, keys: string[]): boolean {
  for (const key of keys) {
    const field = key.replace(/^-/, '');
    const [x, y] = [a[field], b[field]].map((v) => (typeof v === 'object' && v !== null ? (v as { value: number }).value : v));
    if (x === y) continue;
    return x! < y! !== key.startsWith('-');
  }
  return true;
}

let customer: { user: { id: number }; token: string };
let staff: string;
let orderWithItems: number;
let paymentWithRefunds: number;
let deliveriesEndpoint: number;
let since: string;

describe('keyset paging (cursors) on every collection', () => {
  before(async () => {
    customer = await createCustomer(t);
    staff = await createStaffToken(t, [...ALL_SCOPES, 'events:read', 'webhooks:read', 'webhooks:write']);
    since = await databaseNow(t.db);
    // Every event from here is delivered to this endpoint: its delivery log.
    deliveriesEndpoint = (await insertWebhookEndpoint(t.db, t.config, { url: PUBLIC_URL_LITERAL })).id;

    // 11 orders: creation times, statuses and totals repeat, so every sort has ties for id to break.
    const statuses = ['pending', 'paid', 'shipped'] as const;
    for (let i = 0; i < 11; i++) {
      await createOrderRow(t.db, customer.user.id, {
        status: statuses[i % 3],
        total: 500 * (1 + (i % 4)),
        createdAt: `2026-03-0${1 + (i % 5)}T10:00:00.000Z`,
      });
    }
    // An order of 8 lines.
    const lines: Awaited<ReturnType<typeof createProduct>>[] = [];
    for (let i = 0; i < 8; i++) lines.push(await createProduct(t.db, { price: 100 * (i + 1) }));
    orderWithItems = await t.db.transaction(async (tx) => {
      const order = await insertOrder(tx, { customerId: customer.user.id, total: 3600, currency: 'EUR' });
      await insertOrderItems(
        tx,
        order,
        lines.map((p) => ({ productId: p.id, qty: 1, unitPrice: p.price, lineTotal: p.price })),
      );
      return order.id;
    });
    // Products: names and prices repeat (created through the API, so each records an event).
    for (const [name, value] of [
      ['Mug', 900],
      ['Mug', 900],
      ['Cup', 900],
      ['Bowl', 1500],
      ['Cup', 400],
      ['Plate', 1500],
      ['Mug', 400],
    ] as const) {
      const res = await t.request(staff, { method: 'POST', url: '/v2/products', payload: { name, price: { value, currency: 'EUR' } } });
      assert.equal(res.statusCode, 201, res.body);
    }
    await t.db.query("UPDATE products SET created_at = '2026-02-01T00:00:00Z' WHERE name IN ('Mug', 'Cup')");
    // Events of one instant are ordered by the order they were recorded in (seq).
    await t.db.query(`UPDATE events SET created_at = '2030-01-01T00:00:00Z' WHERE id IN (SELECT id FROM events ORDER BY seq DESC LIMIT 4)`);
    // 7 payments, 3 of them at one instant; one of them refunded in 7 parts.
    const payments = [];
    for (let i = 0; i < 7; i++) payments.push(await makePayment(t, customer.token, { amount: 1000 + i, currency: 'EUR' }));
    await t.db.query("UPDATE payments SET created_at = '2026-04-01T00:00:00Z' WHERE id = ANY($1::bigint[])", [
      payments.slice(2, 5).map((p) => p.id),
    ]);
    paymentWithRefunds = payments[0]!.id;
    for (let i = 0; i < 7; i++) await makeRefund(t, staff, paymentWithRefunds, { amount: 100 });
    // 7 webhook endpoints, 4 created at one instant.
    for (let i = 0; i < 7; i++) await registerEndpoint(t, staff, { description: `endpoint ${i}` });
    await t.db.query(
      "UPDATE webhook_endpoints SET created_at = '2026-05-01T00:00:00Z' WHERE description IN ('endpoint 1', 'endpoint 2', 'endpoint 4', 'endpoint 6')",
    );
  });

  describe('following the cursors lists every element once, in order, and back', () => {
    const ORDER_SORTS = [
      '',
      'sort=-createdAt',
      'sort=status,-total',
      'sort=-total,createdAt',
      'sort=-id',
      'sort=-createdAt,status',
      'sort=total,-status',
    ];
    for (const version of ['/v1', '/v2']) {
      for (const sort of ORDER_SORTS) {
        test(`${version}/orders?${sort}: by the cursors, then back`, async () => {
          const pages = await walkBothWays(customer.token, `${version}/orders`, sort);
          const keys = [...(sort ? sort.slice(5).split(',') : ['createdAt']), sort.startsWith('sort=-') ? '-id' : 'id'];
          const listed = pages.flatMap((p) => p.data) as unknown as Record<string, unknown>[];
          for (let i = 1; i < listed.length; i++) assert.ok(inOrder(listed[i - 1]!, listed[i]!, keys), `${sort}: ${i - 1} then ${i}`);
        });
      }
    }

    test('/users/{userId}/orders and /orders?status= (staff): the same, filtered', async () => {
      await walkBothWays(customer.token, `/v2/users/${customer.user.id}/orders`, 'sort=-createdAt,status');
      await walkBothWays(staff, '/v2/orders', `customerId=${customer.user.id}&status=pending&sort=status,-total`, 2);
      await walkBothWays(staff, '/v1/orders', `customerId=${customer.user.id}&minTotal=1000&sort=status`);
    });

    test('/order-items?orderId=', async () => {
      await walkBothWays(customer.token, '/v1/order-items', `orderId=${orderWithItems}`);
    });

    for (const sort of ['', 'sort=name', 'sort=-price', 'sort=price,-name', 'sort=createdAt', 'sort=-createdAt,name']) {
      test(`/products?${sort}`, async () => {
        await walkBothWays(customer.token, '/v2/products', sort);
      });
    }
    test('/products?active=true', async () => {
      await walkBothWays(customer.token, '/v1/products', 'active=true&sort=-name');
    });

    for (const sort of ['', 'sort=-createdAt', 'sort=id', 'sort=-id']) {
      test(`/payments?${sort} (a customer's own)`, async () => {
        await walkBothWays(customer.token, '/v2/payments', sort);
      });
    }
    test('/payments/{paymentId}/refunds', async () => {
      await walkBothWays(customer.token, `/v1/payments/${paymentWithRefunds}/refunds`, '');
    });

    test('/events, newest first', async () => {
      await walkBothWays(staff, '/v2/events', `minCreatedAt=${since}`);
      await walkBothWays(staff, '/v1/events', 'type=product.created,payment.succeeded');
    });

    for (const sort of ['', 'sort=createdAt', 'sort=-createdAt', 'sort=-id']) {
      test(`/webhook-endpoints?${sort}`, async () => {
        await walkBothWays(staff, '/v2/webhook-endpoints', sort);
      });
    }
    test('/webhook-endpoints/{id}/deliveries, newest first', async () => {
      await walkBothWays(staff, `/v2/webhook-endpoints/${deliveriesEndpoint}/deliveries`, 'state=pending');
    });
  });

  describe('meta.page, pageSize and versions with cursors', () => {
    test('pageSize may change along the way: the page number is counted in the new size', async () => {
      const { body: second } = await page(customer.token, '/orders?pageSize=3&page=2');
      const { body: next } = await page(customer.token, `/orders?pageSize=2&after=${second.meta.nextCursor}`);
      // Six orders before it: page 4 of pages of 2.
      assert.equal(next.meta.page, 4);
      assert.deepEqual(next.meta.pageSize, 2);
      const { body: all } = await page(customer.token, '/orders?pageSize=100');
      assert.deepEqual(next.data, all.data.slice(6, 8));
    });

    test('a cursor given by /v1 leads /v2 to the same page (one collection, two representations)', async () => {
      const { body: first } = await page(customer.token, '/v1/orders?pageSize=3');
      const v1 = await page(customer.token, `/v1/orders?pageSize=3&after=${first.meta.nextCursor}`);
      const v2 = await page(customer.token, `/v2/orders?pageSize=3&after=${first.meta.nextCursor}`);
      assert.deepEqual(
        v2.body.data.map((o) => o.id),
        v1.body.data.map((o) => o.id),
      );
      assert.deepEqual(v2.body.meta, v1.body.meta);
    });
  });

  describe('rows added or removed between pages', () => {
    test('by cursor, no row still there is repeated or skipped; by page number, one may be', async () => {
      const { user, token } = await createCustomer(t);
      const ids: number[] = [];
      for (let i = 0; i < 9; i++) ids.push(await createOrderRow(t.db, user.id, { createdAt: `2026-06-0${i + 1}T00:00:00.000Z` }));
      const first = (await page(token, '/orders?pageSize=3')).body;
      assert.deepEqual(
        first.data.map((o) => o.id),
        ids.slice(0, 3),
      );
      // Before the next page is read: an order older than all (it sorts first) and one of page 2 deleted.
      const older = await createOrderRow(t.db, user.id, { createdAt: '2026-05-01T00:00:00.000Z' });
      assert.equal((await t.request(token, { method: 'DELETE', url: `/orders/${ids[4]}` })).statusCode, 204);
      const rest: number[] = [];
      for (let cursor = first.meta.nextCursor; cursor !== null; ) {
        const { body } = await page(token, `/orders?pageSize=3&after=${cursor}`);
        rest.push(...body.data.map((o) => o.id as number));
        cursor = body.meta.nextCursor;
      }
      assert.deepEqual(rest, [ids[3], ...ids.slice(5)]);
      // By page number the pages shift: page 2 now starts with what page 1 ended with.
      const second = (await page(token, '/orders?pageSize=3&page=2')).body;
      assert.equal(second.data[0]!.id, ids[2]);
      assert.notEqual(older, undefined);
    });
  });

  describe('refused cursors: 400 QUERY_CURSOR_INVALID, never a 5xx', () => {
    const detail = (parameter: string) => `${parameter} is not a cursor this collection gave for these filters and sort`;
    const expectRefused = (res: LightMyRequestResponse, instance: string, parameter = 'after') =>
      expectProblem(res, 400, 'QUERY_CURSOR_INVALID', instance, `${detail(parameter)}; start again from the first page.`, {
        errors: [{ parameter, detail: detail(parameter) }],
      });
    const nextCursorOf = async (token: string, url: string) => {
      const cursor = (await page(token, url)).body.meta.nextCursor;
      assert.ok(cursor, `${url} has a next page`);
      return cursor;
    };

    test('given by another collection, with other filters, another sort or to another customer', async () => {
      const fromOrders = await nextCursorOf(customer.token, '/orders?pageSize=2');
      expectRefused(await get(t, customer.token, `/products?after=${fromOrders}`), '/products');
      expectRefused(await get(t, customer.token, `/payments?before=${fromOrders}`), '/payments', 'before');
      expectRefused(await get(t, customer.token, `/orders?status=paid&after=${fromOrders}`), '/orders');
      expectRefused(await get(t, customer.token, `/orders?sort=-createdAt&after=${fromOrders}`), '/orders');
      expectRefused(await get(t, customer.token, `/orders?minTotal=0&after=${fromOrders}`), '/orders');
      // Another customer's own orders are another collection's rows: their cursor is not theirs to use.
      const other = await createCustomer(t);
      expectRefused(await get(t, other.token, `/orders?after=${fromOrders}`), '/orders');
      // …while the customer goes on with it, in either direction.
      assert.equal((await get(t, customer.token, `/orders?pageSize=2&after=${fromOrders}`)).statusCode, 200);
      assert.equal((await get(t, customer.token, `/orders?before=${fromOrders}`)).statusCode, 200);
      const pending = await nextCursorOf(staff, `/orders?customerId=${customer.user.id}&status=pending&pageSize=1`);
      expectRefused(await get(t, staff, `/orders?customerId=${customer.user.id}&status=shipped&after=${pending}`), '/orders');
      expectRefused(await get(t, staff, `/orders?after=${pending}`), '/orders');
    });

    test('altered, cut short or grown', async () => {
      const cursor = await nextCursorOf(customer.token, '/orders?pageSize=2');
      const [payload, mac] = cursor.split('.') as [string, string];
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const content = readCursor(cursor)!;
      const rewritten = (change: object) => `${Buffer.from(JSON.stringify({ ...content, ...change })).toString('base64url')}.${mac}`;
      for (const bad of [
        flip(cursor, cursor.length - 2),
        flip(cursor, 0),
        `${payload}.${mac.slice(0, -1)}`,
        cursor.slice(0, -4),
        `${payload.slice(0, -2)}.${mac}`,
        `${payload}.${mac}A`,
        rewritten({ n: 0 }),
        rewritten({ v: [content.v[0], 1] }),
        'abc.def',
        `${mac}.${payload}`,
      ]) {
        expectRefused(await get(t, customer.token, `/orders?after=${bad}`), '/orders');
        expectRefused(await get(t, customer.token, `/v1/orders?before=${bad}`), '/v1/orders', 'before');
      }
    });

    test('signed with the key but of the wrong shape (no client can make one; still a 400)', async () => {
      const { rows } = await t.db.query<{ value: string }>("SELECT value FROM app_secrets WHERE name = 'cursor_key'");
      const codec = createCursorCodec(Buffer.from(rows[0]!.value, 'base64url'));
      // What a customer's GET /orders binds its cursors to: the collection, their own id, the default sort.
      const scope = JSON.stringify(['orders', [['customerId', customer.user.id]], ['createdAt', 'id']]);
      const genuine = codec.sign(scope, { values: ['2026-03-01T10:00:00.000Z', 1], n: 0 });
      assert.equal((await get(t, customer.token, `/orders?after=${genuine}`)).statusCode, 200, 'the scope is the one the server signs');
      for (const values of [
        [1, 1],
        ['2026-03-01T10:00:00.000Z', '1'],
        ['2026-13-45T10:00:00.000Z', 1],
        ['yesterday', 1],
        ['2026-03-01T10:00:00.000Z'],
        ['2026-03-01T10:00:00.000Z', 1, 1],
      ]) {
        expectRefused(await get(t, customer.token, `/orders?after=${codec.sign(scope, { values, n: 0 })}`), '/orders');
      }
      const huge = codec.sign(scope, { values: ['2026-03-01T10:00:00.000Z', Number.MAX_SAFE_INTEGER], n: Number.MAX_SAFE_INTEGER });
      const beyond = await get(t, customer.token, `/orders?after=${huge}`);
      assert.equal(beyond.statusCode, 200, beyond.body);
      assert.equal(beyond.json().meta.page, 1_000_000);
    });

    test('not a cursor at all: a parameter error, naming it', async () => {
      for (const [query, parameter] of [
        ['after=not%20a%20cursor', 'after'],
        ['before=abc', 'before'],
        [`after=${'a'.repeat(2048)}.b`, 'after'],
      ] as const) {
        const res = await get(t, customer.token, `/orders?${query}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'REQUEST_PARAMETER_INVALID');
        assert.deepEqual(
          res.json().errors.map((e: { parameter: string }) => e.parameter),
          [parameter],
        );
      }
    });

    test('page with after or before, or after with before: 400 naming the parameter', async () => {
      const cursor = await nextCursorOf(customer.token, '/orders?pageSize=2');
      const cases = [
        [`page=1&after=${cursor}`, 'page', 'page cannot be combined with after: a cursor names the page'],
        [`page=2&before=${cursor}`, 'page', 'page cannot be combined with before: a cursor names the page'],
        [`after=${cursor}&before=${cursor}`, 'before', 'after and before cannot be combined'],
      ] as const;
      for (const [query, parameter, message] of cases) {
        expectProblem(await get(t, customer.token, `/orders?${query}`), 400, 'REQUEST_PARAMETER_INVALID', '/orders', `${message}.`, {
          errors: [{ parameter, detail: message }],
        });
      }
    });
  });
});
