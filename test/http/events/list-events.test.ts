// GET /events and GET /events/{eventId}: the collection contract (newest first, paging, Link), the
// filters and their 400s, one event alone, and who may read the log. Each test lists only the
// events it made: from the database's clock before it (minCreatedAt), or moved to instants of its own.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ErrorCode } from '../../../src/core/errors.ts';
import { ALL_SCOPES, PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { EMPTY_FIRST_PAGE_META, readableMeta } from '../../helpers/paging.ts';
import { createCustomer, createServiceToken, createStaffToken, get } from '../../helpers/actors.ts';
import { createOrder } from '../../helpers/factories.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import { createEventReader, databaseNow, eventsAbout, JSON_TYPE, postKeyed, readEvent, send } from './events.ts';

const t = setUpTestApp();

const link = (query: string, rel: string) => `<${PUBLIC_URL}/v2/events?${query}>; rel="${rel}"`;

/** Makes, in this order: product.created, product.updated, payment.succeeded + order.paid, order.cancelled, then refund.succeeded (the processor asked after the cancellation committed). */
async function makeSixEvents(reader: string) {
  const created = await send(t, reader, 'POST', '/v2/products', { name: 'Lamp', price: { value: 2000, currency: 'EUR' } });
  assert.equal(created.statusCode, 201, created.body);
  const product = created.json();
  const updated = await send(t, reader, 'PUT', `/v2/products/${product.id}`, {
    name: 'Lamp',
    price: { value: 2100, currency: 'EUR' },
    active: true,
  });
  assert.equal(updated.statusCode, 200, updated.body);
  const { user, token } = await createCustomer(t);
  const order = await createOrder(t.db, user.id, { price: 2100, currency: 'EUR' });
  const paid = await postKeyed(t, token, '/v2/payments', { amount: { value: 2100, currency: 'EUR' }, orderId: order.id });
  assert.equal(paid.statusCode, 201, paid.body);
  const cancelled = await send(t, reader, 'PUT', `/v2/orders/${order.id}`, { status: 'cancelled' });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  return { product, order, payment: paid.json() };
}

/** Moves these events to one instant of the test's own (the order between them kept by seq). */
async function moveEvents(ids: string[], createdAt: string): Promise<void> {
  await t.db.query('UPDATE events SET created_at = $2 WHERE id = ANY($1::text[])', [ids, createdAt]);
}

describe('GET /events: newest first, in the collection envelope', () => {
  test('events of several transactions newest first; of one transaction, the last recorded first', async () => {
    const reader = await createEventReader(t);
    const since = await databaseNow(t.db);
    await makeSixEvents(reader);

    const res = await get(t, reader, `/v2/events?minCreatedAt=${since}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers.etag, undefined);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['data', 'meta']);
    assert.deepEqual(
      body.data.map((e: { type: string }) => e.type),
      ['refund.succeeded', 'order.cancelled', 'order.paid', 'payment.succeeded', 'product.updated', 'product.created'],
    );
    assert.deepEqual(body.meta, { total: 6, page: 1, pageSize: 20, totalPages: 1, nextCursor: null, prevCursor: null });
    const createdAts = body.data.map((e: { createdAt: string }) => e.createdAt);
    assert.deepEqual(createdAts, [...createdAts].sort().reverse());
    // Each element is the event exactly as GET /events/{id} shows it.
    for (const event of body.data) assert.deepEqual(await readEvent(t, reader, event.id), event);
  });

  test('events sharing one instant stay newest first by the order they were recorded', async () => {
    const reader = await createEventReader(t);
    const since = await databaseNow(t.db);
    const { product } = await makeSixEvents(reader);
    const ids = (await eventsAbout(t.db, 'product', product.id)).map((e) => e.id);
    await moveEvents(ids, '2002-01-01T00:00:00.000Z');
    const res = await get(t, reader, '/v2/events?minCreatedAt=2002-01-01T00:00:00Z&maxCreatedAt=2002-01-01T00:00:00Z');
    assert.deepEqual(
      res.json().data.map((e: { id: string }) => e.id),
      [...ids].reverse(),
    );
    assert.equal((await get(t, reader, `/v2/events?minCreatedAt=${since}`)).json().meta.total, 4);
  });

  test('pages: pageSize and page, exact meta, Link first/prev/next/last keeping the filters', async () => {
    const reader = await createEventReader(t);
    const since = await databaseNow(t.db);
    await makeSixEvents(reader);
    const all = (await get(t, reader, `/v2/events?minCreatedAt=${since}`)).json().data;
    const query = (page: number) => new URLSearchParams({ minCreatedAt: since, pageSize: '4', page: String(page) }).toString();

    // A cursor names an event by (createdAt, seq): seq, its place in the log, is not shown.
    const at = async (event: { id: string; createdAt: string }, n: number) => {
      const { rows } = await t.db.query<{ seq: number }>('SELECT seq FROM events WHERE id = $1', [event.id]);
      return { v: [event.createdAt, rows[0]!.seq], n };
    };
    const beside = (name: string, cursor: string) => new URLSearchParams({ minCreatedAt: since, pageSize: '4', [name]: cursor }).toString();

    const first = await get(t, reader, `/v2/events?minCreatedAt=${since}&pageSize=4`);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().data, all.slice(0, 4));
    const { nextCursor } = first.json().meta;
    assert.deepEqual(readableMeta(first.json().meta), {
      ...{ total: 6, page: 1, pageSize: 4, totalPages: 2 },
      ...{ nextCursor: await at(all[3], 3), prevCursor: null },
    });
    assert.equal(
      pagingLinks(first),
      [link(query(1), 'first'), link(beside('after', nextCursor), 'next'), link(query(2), 'last')].join(', '),
    );

    const second = await get(t, reader, `/v2/events?minCreatedAt=${since}&pageSize=4&page=2`);
    assert.deepEqual(second.json().data, all.slice(4));
    const { prevCursor } = second.json().meta;
    assert.deepEqual(readableMeta(second.json().meta), {
      ...{ total: 6, page: 2, pageSize: 4, totalPages: 2 },
      ...{ nextCursor: null, prevCursor: await at(all[4], 4) },
    });
    assert.equal(
      pagingLinks(second),
      [link(query(1), 'first'), link(beside('before', prevCursor), 'prev'), link(query(2), 'last')].join(', '),
    );
    // The cursors lead to the same pages.
    assert.deepEqual((await get(t, reader, `/v2/events?${beside('after', nextCursor)}`)).json(), second.json());
    assert.deepEqual((await get(t, reader, `/v2/events?${beside('before', prevCursor)}`)).json(), first.json());

    const past = await get(t, reader, `/v2/events?minCreatedAt=${since}&pageSize=4&page=3`);
    assert.deepEqual(past.json(), {
      data: [],
      meta: { total: 6, page: 3, pageSize: 4, totalPages: 2, nextCursor: null, prevCursor: null },
    });
  });

  test('nothing matching: an empty page, total 0', async () => {
    const reader = await createEventReader(t);
    const res = await get(t, reader, '/v2/events?maxCreatedAt=1999-12-31T23:59:59.999Z');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      data: [],
      meta: EMPTY_FIRST_PAGE_META,
    });
  });
});

describe('GET /events: filters', () => {
  test('type: one event type, or several separated by commas (named twice counts once)', async () => {
    const reader = await createEventReader(t);
    const since = await databaseNow(t.db);
    await makeSixEvents(reader);
    const types = async (query: string) =>
      (await get(t, reader, `/v2/events?minCreatedAt=${since}&${query}`)).json().data.map((e: { type: string }) => e.type);

    assert.deepEqual(await types('type=order.paid'), ['order.paid']);
    assert.deepEqual(await types('type=product.created,order.cancelled'), ['order.cancelled', 'product.created']);
    assert.deepEqual(await types('type=refund.succeeded,refund.succeeded'), ['refund.succeeded']);
    assert.deepEqual(await types('type=order.delivered'), []);
    // A type nothing records yet is still a type (webhook endpoints record them).
    assert.deepEqual(await types('type=webhook_endpoint.ping'), []);
  });

  test('minCreatedAt and maxCreatedAt: both inclusive, in any offset, combined with type', async () => {
    const reader = await createEventReader(t);
    const { product, order } = await makeSixEvents(reader);
    const [created, updated] = await eventsAbout(t.db, 'product', product.id);
    const [paid, cancelled] = await eventsAbout(t.db, 'order', order.id);
    await moveEvents([created!.id], '2001-02-03T04:05:06.007Z');
    await moveEvents([updated!.id], '2001-02-03T04:05:06.008Z');
    await moveEvents([paid!.id, cancelled!.id], '2001-02-03T04:05:06.009Z');
    const ids = async (query: string) => {
      const res = await get(t, reader, `/v2/events?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((e: { id: string }) => e.id);
    };

    assert.deepEqual(await ids('minCreatedAt=2001-02-03T04:05:06.007Z&maxCreatedAt=2001-02-03T04:05:06.009Z'), [
      cancelled!.id,
      paid!.id,
      updated!.id,
      created!.id,
    ]);
    assert.deepEqual(await ids('minCreatedAt=2001-02-03T04:05:06.008Z&maxCreatedAt=2001-02-03T04:05:06.008Z'), [updated!.id]);
    assert.deepEqual(await ids('maxCreatedAt=2001-02-03T04:05:06.008Z'), [updated!.id, created!.id]);
    assert.deepEqual(await ids('minCreatedAt=2001-02-03T04:05:06.0081Z&maxCreatedAt=2001-02-03T04:05:07Z'), [cancelled!.id, paid!.id]);
    // The same instant in another offset, and in lower case (RFC 3339 §5.6 allows both).
    assert.deepEqual(await ids('minCreatedAt=2001-02-03T06:05:06.008%2B02:00&maxCreatedAt=2001-02-03t04:05:06.008z'), [updated!.id]);
    assert.deepEqual(await ids('type=order.paid,product.created&minCreatedAt=2001-02-03T04:05:06Z&maxCreatedAt=2001-02-03T04:05:07Z'), [
      paid!.id,
      created!.id,
    ]);
  });
});

describe("GET /events: one resource's history (objectType and objectId)", () => {
  test('the events about one order, one payment, one refund, newest first; a kind alone; with type and the time range', async () => {
    const reader = await createEventReader(t);
    const since = await databaseNow(t.db);
    const { product, order, payment } = await makeSixEvents(reader);
    const [refund] = await eventsAbout(t.db, 'refund', payment.id, 'paymentId');
    const refundId = ((await readEvent(t, reader, refund!.id)).data as { object: { id: number } }).object.id;
    const types = async (query: string) => {
      const res = await get(t, reader, `/v2/events?${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((e: { type: string; data: { object: { id: number } } }) => `${e.type} ${e.data.object.id}`);
    };

    assert.deepEqual(await types(`objectType=order&objectId=${order.id}`), [`order.cancelled ${order.id}`, `order.paid ${order.id}`]);
    assert.deepEqual(await types(`objectType=payment&objectId=${payment.id}`), [`payment.succeeded ${payment.id}`]);
    assert.deepEqual(await types(`objectType=refund&objectId=${refundId}`), [`refund.succeeded ${refundId}`]);
    assert.deepEqual(await types(`objectType=product&minCreatedAt=${since}`), [
      `product.updated ${product.id}`,
      `product.created ${product.id}`,
    ]);
    assert.deepEqual(await types(`objectType=order&objectId=${order.id}&type=order.paid`), [`order.paid ${order.id}`]);
    assert.deepEqual(await types(`objectType=order&objectId=${order.id}&type=payment.succeeded`), []);
    assert.deepEqual(await types(`objectType=order&objectId=${order.id}&maxCreatedAt=${since}`), []);
    assert.deepEqual(await types('objectType=order&objectId=999999999'), []);
    const stored = await eventsAbout(t.db, 'order', order.id);
    assert.equal((await get(t, reader, `/v2/events?objectType=order&objectId=${order.id}`)).json().meta.total, stored.length);
  });

  test('paging by cursor keeps the filter; a cursor of the unfiltered log is refused', async () => {
    const reader = await createEventReader(t);
    const { order } = await makeSixEvents(reader);
    const filter = `objectType=order&objectId=${order.id}`;
    const first = await get(t, reader, `/v2/events?${filter}&pageSize=1`);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(
      first.json().data.map((e: { type: string }) => e.type),
      ['order.cancelled'],
    );
    const { nextCursor } = first.json().meta;
    assert.match(pagingLinks(first) ?? '', new RegExp(`objectType=order&objectId=${order.id}&pageSize=1&after=`));
    const second = await get(t, reader, `/v2/events?${filter}&pageSize=1&after=${encodeURIComponent(nextCursor)}`);
    assert.deepEqual(
      second.json().data.map((e: { type: string }) => e.type),
      ['order.paid'],
    );
    assert.equal(second.json().meta.nextCursor, null);

    const unfiltered = (await get(t, reader, '/v2/events?pageSize=1')).json().meta.nextCursor;
    const refused = await get(t, reader, `/v2/events?${filter}&pageSize=1&after=${encodeURIComponent(unfiltered)}`);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'QUERY_CURSOR_INVALID');
  });

  test('v1 has the filter too, its objects in v1', async () => {
    const reader = await createEventReader(t);
    const { order } = await makeSixEvents(reader);
    const res = await get(t, reader, `/v1/events?objectType=order&objectId=${order.id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().data.map((e: { type: string; data: { object: Record<string, unknown> } }) => [e.type, e.data.object.currency]),
      [
        ['order.cancelled', 'EUR'],
        ['order.paid', 'EUR'],
      ],
    );
  });
});

describe('GET /events: malformed or unknown parameters → 400 naming the parameter', () => {
  const invalid = (parameter: string, detail: string) => ({
    code: 'REQUEST_PARAMETER_INVALID' as const,
    parameter,
    detail: `query parameter "${parameter}" ${detail}`,
  });
  const unknownType = (name: string) => ({
    code: 'REQUEST_PARAMETER_INVALID' as const,
    parameter: 'type',
    detail: `"${name}" is not an event type; use order.created, order.paid, order.shipped, order.delivered, order.cancelled, order.deleted, payment.succeeded, payment.declined, refund.succeeded, product.created, product.updated, webhook_endpoint.disabled, webhook_endpoint.ping`,
  });
  const typePattern = invalid('type', 'must match pattern "^[a-z_]+\\.[a-z_]+(,[a-z_]+\\.[a-z_]+)*$"');
  const dateTime = (parameter: string) => invalid(parameter, 'must match format "date-time"');
  const cases: [query: string, expected: { code: ErrorCode; parameter: string; detail: string }][] = [
    ['type=order.refunded', unknownType('order.refunded')],
    ['type=order.paid,payment.refunded', unknownType('payment.refunded')],
    ['type=__proto__.x', unknownType('__proto__.x')],
    ['type=order', typePattern],
    ['type=Order.Paid', typePattern],
    ['type=order.paid,', typePattern],
    ['type=order.paid%20', typePattern],
    ['type=', typePattern],
    ['type=order.paid&type=order.shipped', invalid('type', 'may appear only once')],
    ['type=' + 'order.paid,'.repeat(100) + 'order.paid', invalid('type', 'must NOT have more than 1000 characters')],
    ['minCreatedAt=yesterday', dateTime('minCreatedAt')],
    ['minCreatedAt=2026-11-22', dateTime('minCreatedAt')],
    ['minCreatedAt=2026-11-22T10:00:00', dateTime('minCreatedAt')],
    ['maxCreatedAt=2026-02-30T10:00:00Z', dateTime('maxCreatedAt')],
    ['maxCreatedAt=', dateTime('maxCreatedAt')],
    ['minCreatedAt=2026-01-01T00:00:00Z&minCreatedAt=2026-01-02T00:00:00Z', invalid('minCreatedAt', 'may appear only once')],
    [
      'minCreatedAt=2026-01-02T00:00:00Z&maxCreatedAt=2026-01-01T23:59:59.999Z',
      { code: 'REQUEST_PARAMETER_INVALID', parameter: 'minCreatedAt', detail: 'minCreatedAt is later than maxCreatedAt' },
    ],
    [
      'objectId=5',
      {
        code: 'REQUEST_PARAMETER_INVALID',
        parameter: 'objectId',
        detail: 'objectId names a resource only with objectType (order, payment, refund, product or webhook_endpoint)',
      },
    ],
    ['objectType=orders', invalid('objectType', 'must be equal to one of the allowed values')],
    ['objectType=Order', invalid('objectType', 'must be equal to one of the allowed values')],
    ['objectType=order&objectId=0', invalid('objectId', 'must be >= 1')],
    ['objectType=order&objectId=x', invalid('objectId', 'must be integer')],
    ['objectType=order&objectType=payment', invalid('objectType', 'may appear only once')],
    ['pageSize=101', invalid('pageSize', 'must be <= 100')],
    ['page=0', invalid('page', 'must be >= 1')],
  ];

  for (const [query, expected] of cases) {
    test(`${query.slice(0, 80)} → ${expected.code}`, async () => {
      const reader = await createEventReader(t);
      const res = await get(t, reader, `/v2/events?${query}`);
      const detail = /^(minCreatedAt is later|objectId names)/.test(expected.detail) ? `${expected.detail}.` : expected.detail;
      expectProblem(res, 400, expected.code, '/v2/events', detail, {
        errors: [{ parameter: expected.parameter, detail: expected.detail }],
      });
    });
  }

  for (const parameter of ['sort', 'customerId', 'status', 'createdAt', 'limit']) {
    test(`${parameter}= → 400 QUERY_UNKNOWN_PARAMETER`, async () => {
      const reader = await createEventReader(t);
      const res = await get(t, reader, `/v2/events?${parameter}=1`);
      const detail = `query parameter "${parameter}" is not supported by this collection`;
      expectProblem(res, 400, 'QUERY_UNKNOWN_PARAMETER', '/v2/events', detail, { errors: [{ parameter, detail }] });
    });
  }
});

describe('GET /events/{eventId}', () => {
  test('200: the event, no-store, no ETag', async () => {
    const reader = await createEventReader(t);
    const product = await send(t, reader, 'POST', '/v2/products', { name: 'Desk', price: { value: 15000, currency: 'EUR' } });
    const [stored] = await eventsAbout(t.db, 'product', product.json().id);
    const res = await get(t, reader, `/v2/events/${stored!.id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.etag, undefined);
    assert.deepEqual(res.json(), {
      id: stored!.id,
      type: 'product.created',
      createdAt: stored!.createdAt,
      data: { object: product.json() },
    });
  });

  test('an id no event has → 404 EVENT_NOT_FOUND', async () => {
    const reader = await createEventReader(t);
    const id = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
    expectProblem(await get(t, reader, `/v2/events/${id}`), 404, 'EVENT_NOT_FOUND', `/v2/events/${id}`, `Event ${id} does not exist.`);
  });

  const pattern = 'path parameter "eventId" must match pattern "^evt_[A-Za-z0-9_-]{22}$"';
  const cases: [id: string, details: string[]][] = [
    ['42', [pattern]],
    ['evt_short', [pattern]],
    ['ord_AAAAAAAAAAAAAAAAAAAAAA', [pattern]],
    ['evt_AAAAAAAAAAAAAAAAAAAA.A', [pattern]],
    ['evt_AAAAAAAAAAAAAAAAAAAAAAA', ['path parameter "eventId" must NOT have more than 26 characters', pattern]],
  ];
  for (const [id, details] of cases) {
    test(`a malformed id (${id}) → 400 REQUEST_PARAMETER_INVALID`, async () => {
      const reader = await createEventReader(t);
      expectProblem(await get(t, reader, `/v2/events/${id}`), 400, 'REQUEST_PARAMETER_INVALID', `/v2/events/${id}`, details.join('; '), {
        errors: details.map((detail) => ({ parameter: 'eventId', detail })),
      });
    });
  }
});

describe('who may read the event log (scope events:read; staff users and service clients)', () => {
  test('staff with events:read alone, and a service client with it → 200', async () => {
    const staff = await createStaffToken(t, ['events:read']);
    const service = await createServiceToken(t, ['events:read']);
    const product = await send(t, await createEventReader(t), 'POST', '/v2/products', {
      name: 'Cup',
      price: { value: 500, currency: 'EUR' },
    });
    const [stored] = await eventsAbout(t.db, 'product', product.json().id);
    for (const token of [staff, service]) {
      assert.equal((await get(t, token, '/v2/events')).statusCode, 200);
      assert.equal((await get(t, token, `/v2/events/${stored!.id}`)).statusCode, 200);
    }
  });

  test('without events:read → 403 AUTH_INSUFFICIENT_SCOPE naming it, for staff and services alike', async () => {
    const tokens = [await createStaffToken(t, ALL_SCOPES), await createServiceToken(t, ALL_SCOPES)];
    for (const token of tokens) {
      for (const path of ['/v2/events', '/v2/events/evt_AAAAAAAAAAAAAAAAAAAAAA']) {
        const res = await get(t, token, path);
        expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', path, 'This operation requires the scope "events:read".');
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="events:read"');
      }
    }
  });

  test("a customer → 403 AUTH_FORBIDDEN, even with a token that names events:read: the log shows other customers' data", async () => {
    const { user } = await createCustomer(t);
    const token = await t.token({ userId: user.id, scopes: [...ALL_SCOPES, 'events:read'] });
    const placed = await createOrder(t.db, user.id);
    const cancelled = await send(t, token, 'PUT', `/v2/orders/${placed.id}`, { status: 'cancelled' });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const [own] = await eventsAbout(t.db, 'order', placed.id);
    const detail = "The event log holds every customer's data: staff users and service clients only.";
    for (const path of ['/v2/events', `/v2/events/${own!.id}`]) {
      expectProblem(await get(t, token, path), 403, 'AUTH_FORBIDDEN', path, detail);
    }
  });

  test('without a token → 401', async () => {
    const res = await get(t, undefined, '/v2/events');
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/v2/events', res.json().detail);
  });
});
