// The OpenAPI documents state the rules the server enforces, where OpenAPI 3.1 can say them: the
// grammar of If-Match, If-None-Match, Idempotency-Key and sort, the closed sets of currencies and
// subscribable event types, read-only members of bodies, and links between operations. Each rule
// is checked against the server: what the document allows passes the rule, what it refuses the
// server refuses too.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API_VERSION_NUMBERS } from '../../src/core/api-versions.ts';
import { showsEventType } from '../../src/core/event-versions.ts';
import { CURRENCY_CODES } from '../../src/core/money.ts';
import { ENTITY_TAGS_PATTERN } from '../../src/http/etag.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../../src/idempotency/idempotency.rules.ts';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../src/webhooks/endpoints.rules.ts';
import { createCustomer, createStaffToken } from '../helpers/actors.ts';
import { setUpTestApp } from '../helpers/app.ts';
import { createOrder } from '../helpers/factories.ts';

const t = setUpTestApp();

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema: Json;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { links?: Record<string, { operationId: string; parameters: Record<string, string> }> }>;
}

async function documentOf(version: number): Promise<{ paths: Record<string, Record<string, Operation>>; components: Json }> {
  return (await t.app.inject({ method: 'GET', url: `/v${version}/openapi.json` })).json();
}

function operationsOf(document: Awaited<ReturnType<typeof documentOf>>): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [path, method, op] as [string, string, Operation]),
  );
}

/** Every (key, value) pair of the document, depth first. */
function* members(value: unknown): Generator<[string, unknown]> {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, member] of Object.entries(value)) {
    yield [key, member];
    yield* members(member);
  }
}

describe('grammars and closed sets in every version’s document', () => {
  for (const version of API_VERSION_NUMBERS) {
    test(`v${version}: If-Match, If-None-Match, Idempotency-Key and sort carry their patterns; no marker leaks`, async () => {
      const document = await documentOf(version);
      const seen = new Set<string>();
      for (const [path, method, operation] of operationsOf(document)) {
        for (const parameter of operation.parameters ?? []) {
          const name = parameter.name.toLowerCase();
          const where = `${method.toUpperCase()} ${path} ${parameter.name}`;
          if (name === 'if-match' || name === 'if-none-match') assert.equal(parameter.schema.pattern, ENTITY_TAGS_PATTERN, where);
          if (name === 'idempotency-key') assert.equal(parameter.schema.pattern, IDEMPOTENCY_KEY_PATTERN, where);
          if (name === 'sort')
            assert.match(String(parameter.schema.pattern), /^\^-\?\(\?:[A-Za-z|]+\)\(\?:,-\?\(\?:[A-Za-z|]+\)\)\*\$$/, where);
          seen.add(name);
        }
      }
      assert.deepEqual([...seen].filter((n) => ['if-match', 'if-none-match', 'idempotency-key', 'sort'].includes(n)).sort(), [
        'idempotency-key',
        'if-match',
        'if-none-match',
        'sort',
      ]);
      assert.ok(![...members(document)].some(([key]) => key === 'x-route-checked'), 'the validator’s marker stays out of the document');
    });

    test(`v${version}: every currency is one of the ISO 4217 codes the server knows; enabledEvents lists what v${version} can subscribe to`, async () => {
      const document = await documentOf(version);
      const currencies = [...members(document)].filter(([key, member]) => key === 'currency' && (member as Json)?.pattern === '^[A-Z]{3}$');
      assert.ok(currencies.length > 0);
      for (const [, schema] of currencies) assert.deepEqual((schema as Json).enum, CURRENCY_CODES);
      let eventLists = 0;
      for (const [key, member] of members(document)) {
        if (key === 'enabledEvents' && typeof member === 'object' && member && (member as Json).type === 'array') {
          const expected = ['*', ...SUBSCRIBABLE_EVENT_TYPES.filter((type) => showsEventType(type, version))];
          assert.deepEqual(((member as Json).items as Json).enum, expected);
          eventLists++;
        }
      }
      assert.ok(eventLists > 0);
    });
  }

  test('what the patterns refuse, the server refuses with its own problem', async () => {
    const { user, token } = await createCustomer(t);
    const order = await createOrder(t.db, user.id);
    const sort = await t.request(token, { method: 'GET', url: '/v2/orders?sort=-createdAt,colour' });
    assert.equal(sort.json().code, 'QUERY_UNKNOWN_SORT_KEY');
    const tags = await t.request(token, { method: 'GET', url: `/v2/orders/${order.id}`, headers: { 'if-none-match': 'o1' } });
    assert.equal(tags.json().code, 'REQUEST_HEADER_INVALID');
    const key = await t.request(token, {
      method: 'POST',
      url: '/v2/payments',
      headers: { 'idempotency-key': 'a b' },
      payload: { orderId: order.id, amount: { value: 1, currency: 'EUR' } },
    });
    assert.equal(key.json().code, 'IDEMPOTENCY_KEY_INVALID');
    const staff = await createStaffToken(t);
    const currency = await t.request(staff, {
      method: 'POST',
      url: '/v2/products',
      payload: { name: 'Kettle', price: { value: 1, currency: 'ABC' } },
    });
    assert.equal(currency.json().detail, '/price/currency "ABC" is not an ISO 4217 currency code.');
    for (const [pattern, value] of [
      [ENTITY_TAGS_PATTERN, 'o1'],
      [IDEMPOTENCY_KEY_PATTERN, 'a b'],
    ] as const)
      assert.doesNotMatch(value, new RegExp(pattern, 'u'));
    assert.ok(!CURRENCY_CODES.includes('ABC'));
  });
});

describe('read-only members of request bodies', () => {
  for (const version of API_VERSION_NUMBERS) {
    test(`v${version}: PUT and PATCH of an order mark every member but status readOnly`, async () => {
      const document = await documentOf(version);
      for (const method of ['put', 'patch']) {
        const operation = document.paths['/orders/{orderId}']![method]!;
        const [content] = Object.values(operation.requestBody!.content);
        const properties = content!.schema.properties as Record<string, Json>;
        for (const [name, schema] of Object.entries(properties))
          assert.equal(schema.readOnly, name === 'status' ? undefined : true, `${method} ${name}`);
      }
    });
  }
});

describe('links between operations', () => {
  for (const version of API_VERSION_NUMBERS) {
    test(`v${version}: each link names an operation of the document and only parameters it has`, async () => {
      const document = await documentOf(version);
      const byId = new Map(operationsOf(document).map(([path, , op]) => [op.operationId, { path, op }]));
      let links = 0;
      for (const [, , operation] of operationsOf(document)) {
        for (const response of Object.values(operation.responses)) {
          for (const [name, link] of Object.entries(response.links ?? {})) {
            const target = byId.get(link.operationId);
            assert.ok(target, `${operation.operationId} → ${name}: ${link.operationId} is not in v${version}`);
            const names = new Set((target.op.parameters ?? []).map((p) => `${p.in}.${p.name}`));
            for (const [parameter, expression] of Object.entries(link.parameters)) {
              const qualified = parameter.includes('.') ? parameter : `path.${parameter}`;
              assert.ok(names.has(qualified), `${operation.operationId} → ${name}: ${link.operationId} has no ${qualified}`);
              assert.match(expression, /^\$response\.body#\/[a-zA-Z]+$/);
            }
            links++;
          }
        }
      }
      assert.ok(links >= 20, `${links} links`);
    });
  }

  test('following placeOrder’s GetOrder link reaches the order placed', async () => {
    const document = await documentOf(2);
    const link = document.paths['/orders']!.post!.responses['201']!.links!.GetOrder!;
    assert.deepEqual(link, { operationId: 'getOrder', parameters: { orderId: '$response.body#/id' } });
    const { token } = await createCustomer(t);
    const products = await t.request(token, { method: 'GET', url: '/v2/products?pageSize=1' });
    const productId = products.json().data[0]?.id;
    assert.ok(productId, 'a product to order');
    const placed = await t.request(token, { method: 'POST', url: '/v2/orders', payload: { items: [{ productId, qty: 1 }] } });
    const orderId = placed.json()[link.parameters.orderId!.slice('$response.body#/'.length)];
    const read = await t.request(token, { method: 'GET', url: `/v2/orders/${orderId}` });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), placed.json());
  });
});
