// Generic error handling: RFC 9457 problem bodies for the router's and the parser's errors, request
// ids and 5xx bodies without internals (the fuzz of every route is in fuzz.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { ERRORS, problemSlug, type ErrorCode } from '../../src/core/errors.ts';
import { createCustomer, createStaffToken } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';
import { PROBLEM_JSON } from '../helpers/problems.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Asserts the RFC 9457 members every problem carries, and returns the body. */
function assertProblem(response: LightMyRequestResponse, status: number, code: ErrorCode, instance: string): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], PROBLEM_JSON);
  assert.equal(response.headers['cache-control'], 'no-store');
  const body = response.json();
  assert.equal(body.type, `http://orderpay.test/problems/${problemSlug(code)}`);
  assert.equal(body.title, ERRORS[code].title);
  assert.equal(body.status, status);
  assert.equal(typeof body.detail, 'string');
  assert.ok(body.detail.length > 0);
  assert.equal(body.instance, instance);
  assert.equal(body.code, code);
  assert.equal(body.requestId, response.headers['x-request-id']);
  return body;
}

describe('errors: RFC 9457 problem details for every failure', () => {
  let t: TestApp;
  let staffToken: string;

  before(async () => {
    t = await startTestApp();
    staffToken = await createStaffToken(t);
  });
  after(() => t.close());

  describe('the router', () => {
    test('an unknown route → 404 ROUTE_NOT_FOUND, with or without a token', async () => {
      for (const [token, url] of [
        [undefined, '/nope'],
        [staffToken, '/orders/1/items'],
        [staffToken, '/v1/nope'],
        [undefined, '/orders-items'],
      ] as const) {
        const response = await t.request(token, { method: 'GET', url });
        const body = assertProblem(response, 404, 'ROUTE_NOT_FOUND', url);
        assert.equal(body.detail, `No resource at ${url}.`);
        assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type']);
      }
    });

    test('the instance is the path without the query string', async () => {
      const response = await t.request(undefined, { method: 'GET', url: '/nope?secret=1' });
      assertProblem(response, 404, 'ROUTE_NOT_FOUND', '/nope');
    });

    test('a known path with another method → 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const cases = [
        ['PATCH', '/orders', 'GET, HEAD, POST'],
        ['DELETE', '/v1/orders', 'GET, HEAD, POST'],
        ['POST', '/orders/12', 'DELETE, GET, HEAD, PATCH, PUT'],
        ['POST', '/v1/orders/12', 'DELETE, GET, HEAD, PATCH, PUT'],
        ['PATCH', '/v1/products/12', 'GET, HEAD, PUT'],
        ['DELETE', '/products', 'GET, HEAD, POST'],
        ['POST', '/order-items', 'GET, HEAD'],
        ['PUT', '/users/1/orders', 'GET, HEAD'],
        ['POST', '/livez', 'GET, HEAD'],
      ] as const;
      for (const [method, url, allow] of cases) {
        const response = await t.request(staffToken, { method, url, payload: method === 'DELETE' ? undefined : {} });
        const body = assertProblem(response, 405, 'METHOD_NOT_ALLOWED', url);
        assert.equal(response.headers.allow, allow, `${method} ${url}`);
        assert.equal(body.detail, `${method} is not supported on ${url}; use ${allow}.`);
      }
    });

    test('the router answers before the body is judged: malformed, oversized or non-JSON bodies on no route → 404/405', async () => {
      const bodies = [
        ['application/json', '{'],
        ['application/json', JSON.stringify({ pad: 'x'.repeat(65 * 1024) })],
        ['text/plain', 'hello'],
      ] as const;
      for (const [contentType, payload] of bodies) {
        const missing = await t.request(staffToken, { method: 'PUT', url: '/nope', headers: { 'content-type': contentType }, payload });
        assertProblem(missing, 404, 'ROUTE_NOT_FOUND', '/nope');
        const wrongMethod = await t.request(staffToken, {
          method: 'POST',
          url: '/orders/1',
          headers: { 'content-type': contentType },
          payload,
        });
        assertProblem(wrongMethod, 405, 'METHOD_NOT_ALLOWED', '/orders/1');
        assert.equal(wrongMethod.headers.allow, 'DELETE, GET, HEAD, PATCH, PUT');
      }
    });

    test('a path that is not valid percent-encoding → 400 problem, with the request id in header and body', async () => {
      for (const url of ['/orders/%E0%A4%A', '/v1/products/%zz', '/users/%C0/orders']) {
        const response = await t.request(staffToken, { method: 'GET', url, headers: { 'x-request-id': 'bad-path-1' } });
        const body = assertProblem(response, 400, 'REQUEST_PARAMETER_INVALID', url);
        assert.equal(body.detail, 'The request path is not valid percent-encoding.');
        assert.equal(response.headers['x-request-id'], 'bad-path-1');
      }
    });
  });

  describe('request bodies', () => {
    test('a body over 64 KiB → 413 REQUEST_BODY_TOO_LARGE, and nothing is written', async () => {
      const { user: customer, token } = await createCustomer(t);
      const payload = JSON.stringify({ productId: 1, qty: 1, padding: 'x'.repeat(65 * 1024) });
      const response = await t.request(token, { method: 'POST', url: '/orders', headers: { 'content-type': 'application/json' }, payload });
      const body = assertProblem(response, 413, 'REQUEST_BODY_TOO_LARGE', '/orders');
      assert.equal(body.detail, 'The request body exceeds the 64 KiB limit.');
      const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM orders WHERE customer_id = $1', [customer.id]);
      assert.equal(rows[0]!.n, 0);
    });

    test('a body of exactly 64 KiB is parsed (and then judged by the schema)', async () => {
      const base = JSON.stringify({ name: '', price: 1, currency: 'EUR' });
      const payload = JSON.stringify({ name: 'n'.repeat(64 * 1024 - base.length), price: 1, currency: 'EUR' });
      assert.equal(Buffer.byteLength(payload), 64 * 1024);
      const response = await t.request(staffToken, {
        method: 'POST',
        url: '/products',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      const body = assertProblem(response, 400, 'REQUEST_BODY_INVALID', '/products');
      assert.deepEqual(body.errors, [{ pointer: '/name', detail: '/name must NOT have more than 200 characters' }]);
    });

    for (const [contentType, payload] of [
      ['text/plain', 'productId=1'],
      ['text/plain; charset=utf-8', '{"productId":1,"qty":1}'],
      ['application/x-www-form-urlencoded', 'productId=1&qty=1'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="qty"\r\n\r\n1\r\n--x--'],
      ['application/xml', '<order/>'],
    ] as const) {
      test(`Content-Type ${contentType} → 415 REQUEST_UNSUPPORTED_MEDIA_TYPE`, async () => {
        const response = await t.request(staffToken, { method: 'POST', url: '/orders', headers: { 'content-type': contentType }, payload });
        const body = assertProblem(response, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', '/orders');
        assert.equal(body.detail, 'Send the body as application/json.');
      });
    }

    describe('content codings (RFC 9110 §8.4): bodies are read as sent, so a coded one is refused', () => {
      const product = { name: 'Coded', price: 100, currency: 'EUR' };
      for (const [coding, payload] of [
        ['gzip', gzipSync(JSON.stringify(product))],
        ['br', brotliCompressSync(JSON.stringify(product))],
        ['x-unknown', Buffer.from(JSON.stringify(product))],
        ['gzip, identity', gzipSync(JSON.stringify(product))],
      ] as const) {
        test(`Content-Encoding: ${coding} → 415 REQUEST_UNSUPPORTED_MEDIA_TYPE with Accept-Encoding: identity (RFC 7694), and nothing is written`, async () => {
          const name = `Coded ${coding}`;
          const response = await t.request(staffToken, {
            method: 'POST',
            url: '/products',
            headers: { 'content-type': 'application/json', 'content-encoding': coding },
            payload: coding === 'x-unknown' ? Buffer.from(JSON.stringify({ ...product, name })) : payload,
          });
          const body = assertProblem(response, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', '/products');
          assert.equal(
            body.detail,
            `Request bodies are read without a content coding; send this one without Content-Encoding: ${coding.split(',')[0]}.`,
          );
          assert.equal(response.headers['accept-encoding'], 'identity');
          const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM products WHERE name = $1', [name]);
          assert.equal(rows[0]!.n, 0);
        });
      }

      test('Content-Encoding: identity is no coding: the body is read', async () => {
        const response = await t.request(staffToken, {
          method: 'POST',
          url: '/products',
          headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
          payload: JSON.stringify({ ...product, name: 'Identity' }),
        });
        assert.equal(response.statusCode, 201, response.body);
      });

      test('no route: the router answers first (404), whatever the coding', async () => {
        const response = await t.request(staffToken, {
          method: 'POST',
          url: '/nope',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          payload: gzipSync('{}'),
        });
        assertProblem(response, 404, 'ROUTE_NOT_FOUND', '/nope');
      });
    });

    for (const payload of ['{', '{"productId":1,', "{'productId':1}", '{"productId":1}}', 'undefined', '{"a":1,"a":', '\u0000']) {
      test(`malformed JSON ${JSON.stringify(payload)} → 400 REQUEST_BODY_MALFORMED`, async () => {
        const response = await t.request(staffToken, {
          method: 'POST',
          url: '/products',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        const body = assertProblem(response, 400, 'REQUEST_BODY_MALFORMED', '/products');
        assert.equal(body.detail, 'The body is not valid JSON.');
      });
    }

    test('an empty JSON body → 400 REQUEST_BODY_MALFORMED', async () => {
      const response = await t.request(staffToken, {
        method: 'POST',
        url: '/products',
        headers: { 'content-type': 'application/json' },
        payload: '',
      });
      const body = assertProblem(response, 400, 'REQUEST_BODY_MALFORMED', '/products');
      assert.equal(body.detail, 'The JSON body is empty.');
    });

    test('__proto__ and constructor.prototype in a body are refused, and pollute nothing', async () => {
      for (const payload of [
        '{"__proto__":{"polluted":1},"name":"p","price":1,"currency":"EUR"}',
        '{"constructor":{"prototype":{"polluted":1}},"name":"p","price":1,"currency":"EUR"}',
      ]) {
        const response = await t.request(staffToken, {
          method: 'POST',
          url: '/products',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        assertProblem(response, 400, 'REQUEST_BODY_MALFORMED', '/products');
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('validation problems name each field with a JSON Pointer', async () => {
      const { token } = await createCustomer(t);
      const response = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: '1', qty: 0, note: 'x' } });
      const body = assertProblem(response, 400, 'REQUEST_BODY_INVALID', '/orders');
      const byPointer = (a: { pointer: string }, b: { pointer: string }) => a.pointer.localeCompare(b.pointer);
      assert.deepEqual([...(body.errors as { pointer: string }[])].sort(byPointer), [
        { pointer: '/note', detail: '/note is not a known field' },
        { pointer: '/productId', detail: '/productId must be integer' },
        { pointer: '/qty', detail: '/qty must be >= 1' },
      ]);
    });
  });

  test('an unknown field named with "/" or "~" is pointed at as RFC 6901 escapes it', async () => {
    const { token } = await createCustomer(t);
    const response = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: 1, qty: 1, 'a/b~c': 1 } });
    const body = assertProblem(response, 400, 'REQUEST_BODY_INVALID', '/orders');
    assert.deepEqual(body.errors, [{ pointer: '/a~1b~0c', detail: '/a~1b~0c is not a known field' }]);
  });

  describe('problem bodies stay within the bounds their schema documents', () => {
    test('300 field errors → the first 100 listed; the detail, the pointers and the path cut to 16 KiB', async () => {
      const { token } = await createCustomer(t);
      const items = Array.from({ length: 100 }, () => ({ productId: 0, qty: 0, note: 'x' }));
      const response = await t.request(token, {
        method: 'POST',
        url: '/v2/orders',
        payload: { items, [`~${'k'.repeat(20_000)}`]: 1 },
      });
      // t.request has validated the body against the Problem schema (maxItems, maxLength).
      const body = assertProblem(response, 400, 'REQUEST_BODY_INVALID', '/v2/orders');
      const errors = body.errors as { pointer: string; detail: string }[];
      assert.equal(errors.length, 100);
      assert.ok((body.detail as string).length <= 16_384 && (body.detail as string).endsWith('…'));
      const long = errors.find((e) => e.pointer.startsWith('/~0k'));
      assert.ok(long, 'the unknown field is among the first errors');
      assert.ok(long.pointer.length <= 16_384 && long.detail.length <= 16_384);
    });
  });

  describe('request ids', () => {
    test('a well-formed X-Request-Id is echoed in the header and the problem', async () => {
      for (const id of ['abc-123', 'trace.7:span_9', 'A'.repeat(128)]) {
        const response = await t.request(undefined, { method: 'GET', url: '/nope', headers: { 'x-request-id': id } });
        assert.equal(response.headers['x-request-id'], id);
        assertProblem(response, 404, 'ROUTE_NOT_FOUND', '/nope');
        const ok = await t.request(staffToken, { method: 'GET', url: '/products', headers: { 'x-request-id': id } });
        assert.equal(ok.statusCode, 200);
        assert.equal(ok.headers['x-request-id'], id);
      }
    });

    test('a malformed X-Request-Id is replaced by a fresh UUID', async () => {
      for (const id of ['', 'has space', 'x'.repeat(129), 'quote"', '<script>', 'ünïcode', 'a/b']) {
        const response = await t.request(undefined, { method: 'GET', url: '/nope', headers: { 'x-request-id': id } });
        const generated = response.headers['x-request-id'] as string;
        assert.match(generated, UUID, JSON.stringify(id));
        assert.equal(assertProblem(response, 404, 'ROUTE_NOT_FOUND', '/nope').requestId, generated);
      }
    });

    test('without X-Request-Id every response gets its own UUID', async () => {
      const first = await t.request(undefined, { method: 'GET', url: '/nope' });
      const second = await t.request(undefined, { method: 'GET', url: '/nope' });
      assert.match(first.headers['x-request-id'] as string, UUID);
      assert.match(second.headers['x-request-id'] as string, UUID);
      assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id']);
    });
  });

  describe('5xx bodies carry no internals', () => {
    test('a failing query → 500 INTERNAL_ERROR with a generic detail; the transaction rolls back', async () => {
      const customer = await createUser(t.db);
      const product = await createProduct(t.db, { price: 300 });
      const order = await createOrder(t.db, customer.id, { productId: product.id, price: 300 });
      const token = await t.token({ userId: customer.id });
      // A table gone missing under the running app (a botched deploy): SQLSTATE 42P01.
      await t.db.exec('ALTER TABLE order_items RENAME TO order_items_hidden');
      let listed: LightMyRequestResponse;
      let created: LightMyRequestResponse;
      try {
        listed = await t.app.inject({
          method: 'GET',
          url: `/order-items?orderId=${order.id}`,
          headers: { authorization: `Bearer ${token}` },
        });
        created = await t.app.inject({
          method: 'POST',
          url: '/orders',
          headers: { authorization: `Bearer ${token}` },
          payload: { productId: product.id, qty: 2 },
        });
      } finally {
        await t.db.exec('ALTER TABLE order_items_hidden RENAME TO order_items');
      }
      for (const [response, instance] of [
        [listed, '/order-items'],
        [created, '/orders'],
      ] as const) {
        assert.equal(response.headers['retry-after'], undefined);
        assert.deepEqual(assertProblem(response, 500, 'INTERNAL_ERROR', instance), {
          type: 'http://orderpay.test/problems/internal-error',
          title: 'Internal server error',
          status: 500,
          detail: 'An unexpected error occurred.',
          instance,
          code: 'INTERNAL_ERROR',
          requestId: response.headers['x-request-id'],
        });
        for (const leak of ['order_items', 'relation', 'SELECT', 'INSERT', '42P01', 'stack', '.ts:', 'pglite', 'postgres']) {
          assert.ok(!response.body.toLowerCase().includes(leak.toLowerCase()), `${instance} body leaks "${leak}": ${response.body}`);
        }
      }
      // The order insert ran before the failing item insert: the rollback took it back.
      const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM orders WHERE customer_id = $1', [customer.id]);
      assert.equal(rows[0]!.n, 1);
      // And the application is healthy again once the table is back.
      const again = await t.request(token, { method: 'GET', url: `/order-items?orderId=${order.id}` });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().meta.total, 1);
    });
  });
});
