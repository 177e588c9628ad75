// The product catalogue: read with any valid token; created and replaced by staff (or a service
// client) holding products:write, with Location, ETag and If-Match.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode } from '../../../src/core/errors.ts';
import { createCustomer, createServiceToken, createStaffToken } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { createProduct } from '../../helpers/factories.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';

const t = setUpTestApp();

const JSON_TYPE = 'application/json; charset=utf-8';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MISSING_ID = 2_000_000_000;

/** Staff hold products:write only, unless a test asks for other scopes. */
const staffToken = (scopes: string[] = ['products:write']) => createStaffToken(t, scopes);
const customerToken = async (scopes?: string[]) => (await createCustomer(t, scopes)).token;

const send = (
  method: 'GET' | 'POST' | 'PUT',
  token: string | undefined,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) => t.request(token, { method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });

interface StoredProduct {
  id: number;
  name: string;
  price: number;
  currency: string;
  active: boolean;
  createdAt: string;
  updatedAt: string;
  version: number;
}

async function stored(id: number): Promise<StoredProduct | undefined> {
  const { rows } = await t.db.query<StoredProduct>(
    `SELECT id, name, price, currency, active, created_at AS "createdAt", updated_at AS "updatedAt", version FROM products WHERE id = $1`,
    [id],
  );
  return rows[0];
}

const representation = ({ version: _v, ...product }: StoredProduct) => product;

async function productCount(where = 'TRUE'): Promise<number> {
  return (await t.db.query<{ n: number }>(`SELECT count(*) AS n FROM products WHERE ${where}`)).rows[0]!.n;
}

describe('GET /products and GET /products/{productId}', () => {
  test('any valid token, even without scopes, lists the catalogue', async () => {
    await createProduct(t.db);
    const product = await createProduct(t.db, { name: 'Teapot', price: 2450, currency: 'GBP' });
    const token = await customerToken([]);
    const res = await send('GET', token, '/products?sort=-id&pageSize=1');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'private, no-cache');
    assert.equal(res.headers.vary, 'Accept');
    const total = await productCount();
    assert.deepEqual(res.json().data, [representation((await stored(product.id))!)]);
    assert.deepEqual(readableMeta(res.json().meta), {
      ...{ total, page: 1, pageSize: 1, totalPages: total },
      ...{ nextCursor: { v: [product.id], n: 0 }, prevCursor: null },
    });
    assert.equal(
      pagingLinks(res),
      [
        `<${PUBLIC_URL}/products?sort=-id&pageSize=1&page=1>; rel="first"`,
        `<${PUBLIC_URL}/products?sort=-id&pageSize=1&after=${res.json().meta.nextCursor}>; rel="next"`,
        `<${PUBLIC_URL}/products?sort=-id&pageSize=1&page=${total}>; rel="last"`,
      ].join(', '),
    );
  });

  test('the active filter and sort keys (name, price, createdAt, id)', async () => {
    const made = [
      await createProduct(t.db, { name: 'B widget', price: 300, active: true }),
      await createProduct(t.db, { name: 'A widget', price: 300, active: false }),
      await createProduct(t.db, { name: 'C widget', price: 100, active: true }),
    ];
    const mine = new Set(made.map((p) => p.id));
    const token = await customerToken();
    const listed = async (query: string) => {
      const res = await send('GET', token, `/products?pageSize=100&${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as { id: number; active: boolean }[];
    };
    const [b, a, c] = made.map((p) => p.id);
    assert.deepEqual(
      (await listed('sort=-price,name')).filter((p) => mine.has(p.id)).map((p) => p.id),
      [a, b, c],
    );
    assert.deepEqual(
      (await listed('sort=name')).filter((p) => mine.has(p.id)).map((p) => p.id),
      [a, b, c],
    );
    assert.deepEqual(
      (await listed('sort=price,-id')).filter((p) => mine.has(p.id)).map((p) => p.id),
      [c, a, b],
    );
    const active = await listed('active=true');
    assert.ok(active.every((p) => p.active));
    assert.deepEqual(
      active.filter((p) => mine.has(p.id)).map((p) => p.id),
      [b, c],
    );
    const inactive = await send('GET', token, '/products?active=false&pageSize=100');
    assert.deepEqual(inactive.json().meta.total, await productCount('NOT active'));
    assert.ok((inactive.json().data as { id: number }[]).some((p) => p.id === a));
  });

  test('unknown, malformed and repeated parameters → 400 naming them', async () => {
    const token = await customerToken();
    const cases: [string, ErrorCode, string, string][] = [
      ['currency=EUR', 'QUERY_UNKNOWN_PARAMETER', 'currency', 'query parameter "currency" is not supported by this collection'],
      ['active=yes', 'REQUEST_PARAMETER_INVALID', 'active', 'query parameter "active" must be boolean'],
      ['pageSize=0', 'REQUEST_PARAMETER_INVALID', 'pageSize', 'query parameter "pageSize" must be >= 1'],
      ['active=true&active=false', 'REQUEST_PARAMETER_INVALID', 'active', 'query parameter "active" may appear only once'],
      [
        'sort=currency',
        'QUERY_UNKNOWN_SORT_KEY',
        'sort',
        '"currency" is not a sort key of this collection; use name, price, createdAt, id',
      ],
      ['sort=name,-name', 'QUERY_DUPLICATE_SORT_KEY', 'sort', '"name" appears more than once in sort'],
    ];
    for (const [query, code, parameter, detail] of cases) {
      expectProblem(await send('GET', token, `/products?${query}`), 400, code, '/products', detail, { errors: [{ detail, parameter }] });
    }
  });

  test('one product: 200 with a strong ETag; If-None-Match → 304', async () => {
    const product = await createProduct(t.db, { name: 'Kettle', price: 3999, currency: 'EUR' });
    const token = await customerToken([]);
    const etag = `"pr${product.id}.1.v1"`;
    for (const url of [`/products/${product.id}`, `/v1/products/${product.id}`]) {
      const res = await send('GET', token, url);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.headers.etag, etag);
      assert.deepEqual(res.json(), {
        id: product.id,
        name: 'Kettle',
        price: 3999,
        currency: 'EUR',
        active: true,
        createdAt: product.createdAt,
        updatedAt: product.updatedAt,
      });
    }
    for (const header of [etag, `W/${etag}`, '*', `"x", ${etag}`]) {
      const res = await send('GET', token, `/products/${product.id}`, undefined, { 'if-none-match': header });
      assert.equal(res.statusCode, 304, header);
      assert.equal(res.body, '');
      assert.equal(res.headers.etag, etag);
      assert.equal(res.headers['cache-control'], 'private, no-cache');
      assert.equal(res.headers.vary, 'Accept');
    }
    assert.equal(
      (await send('GET', token, `/products/${product.id}`, undefined, { 'if-none-match': `"pr${product.id}.0.v1"` })).statusCode,
      200,
    );
  });

  test('a missing product → 404; a malformed id → 400; no token → 401', async () => {
    const token = await customerToken();
    expectProblem(
      await send('GET', token, `/products/${MISSING_ID}`),
      404,
      'PRODUCT_NOT_FOUND',
      `/products/${MISSING_ID}`,
      `Product ${MISSING_ID} does not exist.`,
    );
    const detail = 'path parameter "productId" must be integer';
    expectProblem(await send('GET', token, '/products/x1'), 400, 'REQUEST_PARAMETER_INVALID', '/products/x1', detail, {
      errors: [{ detail, parameter: 'productId' }],
    });
    const res = await send('GET', undefined, '/products');
    expectProblem(res, 401, 'AUTH_TOKEN_MISSING', '/products', 'This endpoint requires an access token: Authorization: Bearer <token>.');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay"');
  });
});

describe('POST /products', () => {
  for (const prefix of ['', '/v1']) {
    test(`staff with products:write → 201 at ${prefix}/products with Location, ETag and the product`, async () => {
      const res = await send('POST', await staffToken(), `${prefix}/products`, { name: 'Mug', price: 1250, currency: 'EUR' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/products/${body.id}`);
      assert.equal(res.headers.etag, `"pr${body.id}.1.v1"`);
      assert.deepEqual(body, {
        id: body.id,
        name: 'Mug',
        price: 1250,
        currency: 'EUR',
        active: true,
        createdAt: body.createdAt,
        updatedAt: body.createdAt,
      });
      assert.match(body.createdAt, TIMESTAMP);
      const row = (await stored(body.id))!;
      assert.deepEqual(row, { ...body, version: 1 });
      const read = await send('GET', await customerToken([]), new URL(res.headers.location as string).pathname);
      assert.deepEqual(read.json(), body);
      assert.equal(read.headers.etag, res.headers.etag);
    });
  }

  test('active may be given; a service client with products:write may create', async () => {
    const service = await createServiceToken(t, ['products:write']);
    const res = await send('POST', service, '/products', { name: 'Retired', price: 0, currency: 'JPY', active: false });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().active, res.json().price, res.json().currency], [false, 0, 'JPY']);
    assert.equal((await stored(res.json().id))!.active, false);
  });

  test('a customer, even holding products:write → 403 AUTH_FORBIDDEN; nothing written', async () => {
    const before = await productCount();
    const res = await send('POST', await customerToken(['products:write']), '/products', { name: 'Mine', price: 1, currency: 'EUR' });
    expectProblem(res, 403, 'AUTH_FORBIDDEN', '/products', 'Only staff can change the product catalogue.');
    assert.equal(await productCount(), before);
  });

  test('staff without products:write → 403 insufficient_scope; nothing written', async () => {
    const before = await productCount();
    const res = await send('POST', await staffToken(['orders:read', 'orders:write']), '/products', {
      name: 'X',
      price: 1,
      currency: 'EUR',
    });
    expectProblem(res, 403, 'AUTH_INSUFFICIENT_SCOPE', '/products', 'This operation requires the scope "products:write".');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="products:write"');
    assert.equal(await productCount(), before);
  });

  const invalid: [string, unknown, { pointer: string; detail: string }[], string?][] = [
    [
      'currency "XXY" (well-formed, not ISO 4217)',
      { name: 'X', price: 1, currency: 'XXY' },
      [{ pointer: '/currency', detail: '"XXY" is not an ISO 4217 currency code' }],
      '/currency "XXY" is not an ISO 4217 currency code.',
    ],
    [
      'currency in lower case',
      { name: 'X', price: 1, currency: 'eur' },
      [{ pointer: '/currency', detail: '/currency must match pattern "^[A-Z]{3}$"' }],
    ],
    ['an unknown field', { name: 'X', price: 1, currency: 'EUR', sku: 'A1' }, [{ pointer: '/sku', detail: '/sku is not a known field' }]],
    ['id in the body', { id: 5, name: 'X', price: 1, currency: 'EUR' }, [{ pointer: '/id', detail: '/id is not a known field' }]],
    ['a missing name', { price: 1, currency: 'EUR' }, [{ pointer: '/name', detail: '/name is required' }]],
    [
      'an empty name',
      { name: '', price: 1, currency: 'EUR' },
      [{ pointer: '/name', detail: '/name must NOT have fewer than 1 characters' }],
    ],
    ['a negative price', { name: 'X', price: -1, currency: 'EUR' }, [{ pointer: '/price', detail: '/price must be >= 0' }]],
    ['a fractional price', { name: 'X', price: 12.5, currency: 'EUR' }, [{ pointer: '/price', detail: '/price must be integer' }]],
    ['a price as a string', { name: 'X', price: '125', currency: 'EUR' }, [{ pointer: '/price', detail: '/price must be integer' }]],
    [
      'a price over the maximum',
      { name: 'X', price: 1_000_000_000_001, currency: 'EUR' },
      [{ pointer: '/price', detail: '/price must be <= 1000000000000' }],
    ],
  ];
  for (const [name, body, errors, detail] of invalid) {
    test(`${name} → 400 REQUEST_BODY_INVALID; nothing written`, async () => {
      const before = await productCount();
      const res = await send('POST', await staffToken(), '/products', body);
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/products', detail ?? errors.map((e) => e.detail).join('; '), { errors });
      assert.equal(await productCount(), before);
    });
  }

  test('wrong content type → 415', async () => {
    const res = await send('POST', await staffToken(), '/products', 'name=X', { 'content-type': 'application/x-www-form-urlencoded' });
    expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', '/products', 'Send the body as application/json.');
  });
});

describe('PUT /products/{productId}', () => {
  const body = { name: 'Lamp', price: 5000, currency: 'EUR', active: true };

  test('staff → 200 with the new representation and version; ETag follows', async () => {
    const product = await createProduct(t.db, { name: 'Lamp', price: 5000 });
    const res = await send('PUT', await staffToken(), `/products/${product.id}`, {
      name: 'Desk lamp',
      price: 5500,
      currency: 'USD',
      active: false,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.etag, `"pr${product.id}.2.v1"`);
    assert.equal(res.headers.location, undefined);
    const row = (await stored(product.id))!;
    assert.deepEqual(row, {
      ...representation(row),
      id: product.id,
      name: 'Desk lamp',
      price: 5500,
      currency: 'USD',
      active: false,
      createdAt: product.createdAt,
      version: 2,
    });
    assert.notEqual(row.updatedAt, product.updatedAt);
    assert.deepEqual(res.json(), representation(row));
  });

  test('the same body again → 200, version, ETag and updatedAt unchanged', async () => {
    const product = await createProduct(t.db, { name: 'Lamp', price: 5000 });
    const staff = await staffToken();
    const before = (await stored(product.id))!;
    for (let i = 0; i < 2; i++) {
      const res = await send('PUT', staff, `/products/${product.id}`, body);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers.etag, `"pr${product.id}.1.v1"`);
      assert.deepEqual(res.json(), representation(before));
      assert.deepEqual(await stored(product.id), before);
    }
  });

  test('If-Match: the current tag or * → 200; stale or weak → 412, nothing changes', async () => {
    const staff = await staffToken();
    const a = await createProduct(t.db, { name: 'Lamp', price: 5000 });
    assert.equal(
      (await send('PUT', staff, `/products/${a.id}`, { ...body, price: 1 }, { 'if-match': `"pr${a.id}.1.v1"` })).statusCode,
      200,
    );
    assert.equal((await send('PUT', staff, `/products/${a.id}`, { ...body, price: 2 }, { 'if-match': '*' })).statusCode, 200);
    const before = (await stored(a.id))!;
    assert.equal(before.version, 3);
    for (const tag of [`"pr${a.id}.1.v1"`, `W/"pr${a.id}.3.v1"`]) {
      const res = await send('PUT', staff, `/products/${a.id}`, { ...body, price: 3 }, { 'if-match': tag });
      expectProblem(
        res,
        412,
        'REQUEST_PRECONDITION_FAILED',
        `/products/${a.id}`,
        'If-Match does not match the current entity tag; read the resource again.',
        {
          currentEtag: `"pr${a.id}.3.v1"`,
        },
      );
    }
    assert.deepEqual(await stored(a.id), before);
  });

  test('a complete replacement: a missing field → 400; unknown fields and a bad currency → 400', async () => {
    const product = await createProduct(t.db);
    const before = (await stored(product.id))!;
    const staff = await staffToken();
    const cases: [unknown, { pointer: string; detail: string }[], string?][] = [
      [{ name: 'Lamp', price: 5000, currency: 'EUR' }, [{ pointer: '/active', detail: '/active is required' }]],
      [{ ...body, colour: 'red' }, [{ pointer: '/colour', detail: '/colour is not a known field' }]],
      [
        { ...body, currency: 'XXY' },
        [{ pointer: '/currency', detail: '"XXY" is not an ISO 4217 currency code' }],
        '/currency "XXY" is not an ISO 4217 currency code.',
      ],
    ];
    for (const [payload, errors, detail] of cases) {
      const res = await send('PUT', staff, `/products/${product.id}`, payload);
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', `/products/${product.id}`, detail ?? errors.map((e) => e.detail).join('; '), {
        errors,
      });
    }
    assert.deepEqual(await stored(product.id), before);
  });

  test('a missing product → 404 PRODUCT_NOT_FOUND', async () => {
    expectProblem(
      await send('PUT', await staffToken(), `/products/${MISSING_ID}`, body),
      404,
      'PRODUCT_NOT_FOUND',
      `/products/${MISSING_ID}`,
      `Product ${MISSING_ID} does not exist.`,
    );
  });

  test('a customer → 403; staff without products:write → 403 insufficient_scope; nothing changes', async () => {
    const product = await createProduct(t.db);
    const before = (await stored(product.id))!;
    expectProblem(
      await send('PUT', await customerToken(['products:write']), `/products/${product.id}`, body),
      403,
      'AUTH_FORBIDDEN',
      `/products/${product.id}`,
      'Only staff can change the product catalogue.',
    );
    expectProblem(
      await send('PUT', await staffToken(['orders:write']), `/products/${product.id}`, body),
      403,
      'AUTH_INSUFFICIENT_SCOPE',
      `/products/${product.id}`,
      'This operation requires the scope "products:write".',
    );
    assert.deepEqual(await stored(product.id), before);
  });

  test('a product set inactive can no longer be ordered; a placed order keeps its price', async () => {
    const product = await createProduct(t.db, { name: 'Lamp', price: 5000 });
    const { token } = await createCustomer(t);
    const placed = await send('POST', token, '/orders', { productId: product.id, qty: 2 });
    assert.equal(placed.statusCode, 201);
    assert.equal(
      (await send('PUT', await staffToken(), `/products/${product.id}`, { ...body, price: 9000, active: false })).statusCode,
      200,
    );
    const refused = await send('POST', token, '/orders', { productId: product.id, qty: 1 });
    expectProblem(refused, 422, 'ORDER_PRODUCT_INACTIVE', '/orders', `Product ${product.id} is not for sale.`, {
      errors: [{ pointer: '/productId', detail: 'product is not active' }],
    });
    assert.equal((await send('GET', token, `/orders/${placed.json().id}`)).json().total, 10000);
  });
});
