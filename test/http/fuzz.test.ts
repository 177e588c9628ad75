// A bounded fuzz of every route, replayable from its seed (FUZZ_SEED): no client input yields a 5xx,
// every error is a catalogue problem, and the order counters still agree with the rows afterwards.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ERRORS, type ErrorCode } from '../../src/core/errors.ts';
import { createStaffToken } from '../helpers/actors.ts';
import { setUpTestApp } from '../helpers/app.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';
import { PROBLEM_JSON } from '../helpers/problems.ts';
import { createRandom } from '../helpers/random.ts';

const t = setUpTestApp();

describe('fuzz: no client input yields a 5xx', () => {
  test('300 seeded random requests against every route answer < 500, errors as catalogue problems', async () => {
    const staffToken = await createStaffToken(t);
    const customer = await createUser(t.db);
    const product = await createProduct(t.db);
    const order = await createOrder(t.db, customer.id, { productId: product.id, price: product.price });
    const tokens = [
      staffToken,
      await t.token({ userId: customer.id }),
      await t.token({ service: true, clientId: 'fuzz-service' }),
      await t.token({ userId: customer.id, scopes: ['orders:read'] }),
      await t.token({ userId: 987_654_321 }),
      undefined,
    ];
    const seed = Number(process.env.FUZZ_SEED ?? 20_261_122);
    const random = createRandom(seed);

    const ids = [
      String(order.id),
      String(product.id),
      String(customer.id),
      '0',
      '-1',
      '-9007199254740991',
      '1.5',
      '1e3',
      '1e400',
      '0x10',
      '9007199254740991',
      '9007199254740992',
      '99999999999999999999999999',
      'NaN',
      'Infinity',
      'null',
      '%00',
      '1%00',
      '%2F',
      '%C3%BC',
      '%F0%9F%98%80',
      '%E6%97%A5%E6%9C%AC',
      '%20',
      '%E0%A4%A',
      '..',
      '%2e%2e',
      '[]',
      '{}',
      "'%20OR%201=1--",
    ];
    const values = [
      '',
      '1',
      '0',
      '-5',
      '20',
      '101',
      '9007199254740991',
      '9007199254740993',
      '1e400',
      'abc',
      'true',
      'null',
      '%00',
      '%C3%BC',
      '%F0%9F%98%80',
      'pending',
      'shipped',
      'PENDING',
      'createdAt',
      '-createdAt,status',
      'createdAt,createdAt',
      ',',
      '-',
      'total,-id',
      'name,-price',
      '%27%3B%20DROP%20TABLE%20orders%3B--',
      'x'.repeat(300),
    ];
    const keys = [
      'status',
      'customerId',
      'minTotal',
      'sort',
      'page',
      'pageSize',
      'orderId',
      'active',
      'bogus',
      '__proto__',
      'constructor',
      'status[]',
      'a[b]',
      '%00',
      '',
    ];
    const routes = [
      ['GET', '/orders'],
      ['POST', '/orders'],
      ['GET', '/orders/:id'],
      ['PUT', '/orders/:id'],
      ['DELETE', '/orders/:id'],
      ['GET', '/users/:id/orders'],
      ['GET', '/order-items'],
      ['GET', '/products'],
      ['POST', '/products'],
      ['GET', '/products/:id'],
      ['PUT', '/products/:id'],
      ['PATCH', '/orders/:id'],
      ['HEAD', '/orders'],
    ] as const;

    function deepNesting(depth: number): unknown {
      let value: unknown = 1;
      for (let i = 0; i < depth; i++) value = random.chance(0.5) ? [value] : { a: value };
      return value;
    }
    const scalars = [
      0,
      -1,
      1,
      1.5,
      1e308,
      -0,
      // biome-ignore lint/correctness/noPrecisionLoss: a value past 2^53, exactly what the fuzz sends
      9_007_199_254_740_993,
      '1',
      '',
      'ü😀',
      '\u0000',
      true,
      false,
      null,
      [],
      {},
      'EUR',
      'eur',
      'XTS',
    ];
    function randomBody(): { payload?: string; contentType?: string } {
      const kind = random.next();
      if (kind < 0.08)
        return { payload: JSON.stringify(deepNesting(1 + Math.floor(random.next() * 3000))), contentType: 'application/json' };
      if (kind < 0.14)
        return {
          payload: random.pick([
            '{"__proto__":{"x":1}}',
            '{"constructor":{"prototype":{"x":1}}}',
            '{"productId":1,"qty":1,"__proto__":null}',
          ]),
          contentType: 'application/json',
        };
      if (kind < 0.2)
        return { payload: random.pick(['{', '[1,', '"', 'nul', '{"qty":01}', '\u00ff\u00fe']), contentType: 'application/json' };
      if (kind < 0.25)
        return {
          payload: 'qty=1',
          contentType: random.pick([
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            'application/jsonx',
            ';;',
          ]),
        };
      if (kind < 0.3) return { payload: JSON.stringify(random.pick(scalars)), contentType: 'application/json' };
      const body: Record<string, unknown> = {};
      const fields = [
        'productId',
        'qty',
        'status',
        'name',
        'price',
        'currency',
        'active',
        'id',
        'customerId',
        'total',
        'createdAt',
        'extra',
      ];
      for (const field of fields)
        if (random.chance(0.5))
          body[field] = random.chance(0.4)
            ? random.pick(scalars)
            : random.pick([1, 2, 1000, 1001, product.id, order.id, 'pending', 'cancelled', 'paid', 'Widget', 'EUR', true]);
      return { payload: JSON.stringify(body), contentType: 'application/json' };
    }
    function randomQuery(): string {
      const parts: string[] = [];
      const n = Math.floor(random.next() * 4);
      for (let i = 0; i < n; i++) parts.push(`${random.pick(keys)}=${random.pick(values)}`);
      return parts.length > 0 ? `?${parts.join('&')}` : random.pick(['', '?', '?&', '?=', '?a']);
    }

    for (let i = 0; i < 300; i++) {
      const [method, template] = random.pick(routes);
      const prefix = random.chance(0.3) ? '/v1' : '';
      const url = `${prefix}${template.replace(':id', random.pick(ids))}${randomQuery()}`;
      const headers: Record<string, string> = {};
      if (random.chance(0.1))
        headers.accept = random.pick([
          'application/vnd.orderpay.v1+json',
          'application/vnd.orderpay.v2+json',
          'text/html',
          '*/*',
          'application/vnd.orderpay.v999999999999999999999+json',
        ]);
      if (random.chance(0.1))
        headers[random.pick(['if-match', 'if-none-match'])] = random.pick([
          '*',
          '"o1.1.v1"',
          'W/"x"',
          'garbage',
          '"a", W/"b"',
          '""',
          '\u00ff',
        ]);
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' || random.chance(0.05) ? randomBody() : {};
      // A PATCH's JSON mostly as the merge patch it takes, so that its body reaches the route.
      if (method === 'PATCH' && body.contentType === 'application/json' && random.chance(0.8))
        body.contentType = 'application/merge-patch+json';
      if (body.contentType) headers['content-type'] = body.contentType;
      const token = random.pick(tokens);
      const described = `seed ${seed} #${i}: ${method} ${url} ${JSON.stringify(headers)} ${(body.payload ?? '').slice(0, 120)}`;

      let response: LightMyRequestResponse;
      try {
        // t.request also checks the response against the OpenAPI document.
        response = await t.request(token, { method, url, headers, payload: body.payload });
      } catch (error) {
        assert.fail(`${described}\n${(error as Error).message}`);
      }
      assert.ok(response.statusCode < 500, `${described} → ${response.statusCode} ${response.body}`);
      if (response.statusCode >= 400 && method !== 'HEAD') {
        assert.equal(response.headers['content-type'], PROBLEM_JSON, described);
        const problem = response.json();
        const code = problem.code as ErrorCode;
        assert.ok(code in ERRORS, `${described}: unknown code ${code}`);
        assert.equal(problem.status, response.statusCode, described);
        assert.equal(ERRORS[code].status, response.statusCode, described);
        assert.equal(problem.requestId, response.headers['x-request-id'], described);
      }
    }
    // The fuzz's writes went through the application only: the counters still agree with the rows.
    const { rows } = await t.db.query<{ status: string; n: number; counted: number }>(
      `SELECT o.status, count(*) AS n, (SELECT coalesce(sum(n), 0)::bigint FROM order_status_counts c WHERE c.status = o.status) AS counted
         FROM orders o WHERE o.deleted_at IS NULL GROUP BY o.status`,
    );
    for (const row of rows) assert.equal(row.counted, row.n, row.status);
  });
});
