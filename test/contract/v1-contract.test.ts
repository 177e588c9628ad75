// v1's contract, frozen: the OpenAPI document v1 serves must make no breaking change to
// test/contract/v1.openapi.json (docs/api.md, "Versioning"). The comparison is itself tested on
// copies of the frozen document broken on purpose, since a check that cannot fail proves nothing.
// `npm run freeze-v1-contract` (ORDERPAY_FREEZE_V1_CONTRACT=1) rewrites the frozen document from
// the served one, taking in additions and changes a person judged safe; never a breaking change.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { startTestApp } from '../helpers/app.ts';
import { type ContractChanges, contractChanges } from '../helpers/contract-changes.ts';

const SERVED_V1_DOCUMENT = '/v1/openapi.json';

const FROZEN_V1_DOCUMENT = new URL('./v1.openapi.json', import.meta.url);
const FREEZE = process.env.ORDERPAY_FREEZE_V1_CONTRACT === '1';

interface SchemaJson {
  type?: string | string[];
  required?: string[];
  properties?: Record<string, SchemaJson>;
  enum?: string[];
  description?: string;
  deprecated?: boolean;
  $ref?: string;
}

interface OperationJson {
  parameters?: { name: string; in: string; required?: boolean; schema: SchemaJson; description?: string }[];
  requestBody?: { content: Record<string, { schema: SchemaJson }> };
  responses: Record<string, { description: string }>;
  deprecated?: boolean;
  security?: Record<string, string[]>[];
}

interface DocumentJson {
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, OperationJson>>;
  components: { schemas: Record<string, SchemaJson>; securitySchemes?: Record<string, object> };
}

const frozen = JSON.parse(readFileSync(FROZEN_V1_DOCUMENT, 'utf8')) as DocumentJson;

/** The changes the comparison reports for a copy of the frozen document changed by `change`. */
function changesAfter(change: (document: DocumentJson) => void): ContractChanges {
  const changed = structuredClone(frozen);
  change(changed);
  return contractChanges(frozen, changed);
}

const breakingAfter = (change: (document: DocumentJson) => void): string[] => changesAfter(change).breaking;

/** The breaking changes from a copy made by `prepare` to that copy changed further by `change`. */
function breakingBetween(prepare: (document: DocumentJson) => void, change: (document: DocumentJson) => void): string[] {
  const before = structuredClone(frozen);
  prepare(before);
  const after = structuredClone(before);
  change(after);
  return contractChanges(before, after).breaking;
}

/** A query parameter's schema, as a mutable JSON object. */
const parameterSchema = (document: DocumentJson, path: string, name: string): Record<string, unknown> =>
  operation(document, path, 'get').parameters!.find((p) => p.name === name)!.schema as Record<string, unknown>;

const operation = (document: DocumentJson, path: string, method: string): OperationJson => document.paths[path]![method]!;
const jsonBody = (op: OperationJson): SchemaJson => op.requestBody!.content['application/json']!.schema;
const order = (document: DocumentJson): SchemaJson => document.components.schemas.Order!;

/** The lines of one operation (`GET /orders/{orderId}`), without the operation. */
const linesOf = (lines: string[], op: string): string[] => lines.filter((l) => l.startsWith(`${op} — `)).map((l) => l.slice(op.length + 3));

const ORDER_MEDIA_TYPES = '(application/json, application/vnd.orderpay.v1+json)';
// An event carries an order too (order.*): its operations answer orders as well.
const OPERATIONS_ANSWERING_ORDERS = [
  'GET /events',
  'GET /events/{eventId}',
  'GET /orders',
  'GET /orders/{orderId}',
  'GET /users/{userId}/orders',
  'PATCH /orders/{orderId}',
  'POST /orders',
  'PUT /orders/{orderId}',
];

describe('the v1 contract', () => {
  test(`the document served at ${SERVED_V1_DOCUMENT} changes nothing v1 clients rely on in test/contract/v1.openapi.json`, async (t) => {
    const testApp = await startTestApp();
    try {
      const response = await testApp.app.inject({ method: 'GET', url: SERVED_V1_DOCUMENT });
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers['content-type']), /^application\/json\b/);
      const served = response.json() as DocumentJson;
      const { breaking, unclassified } = contractChanges(frozen, served);
      const listed = (lines: string[]) => lines.map((line) => `  - ${line}`);
      if (breaking.length > 0)
        assert.fail(
          [
            `v1 would break: the document served at ${SERVED_V1_DOCUMENT} makes ${breaking.length} breaking change(s) to test/contract/v1.openapi.json:`,
            ...listed(breaking),
            'v1 must keep answering as it did: make the change in a new API version (docs/api.md, "Versioning").',
          ].join('\n'),
        );
      if (FREEZE) {
        writeFileSync(FROZEN_V1_DOCUMENT, `${JSON.stringify(served, null, 2)}\n`);
        t.diagnostic(`test/contract/v1.openapi.json rewritten from ${SERVED_V1_DOCUMENT}`);
        return;
      }
      if (unclassified.length > 0)
        assert.fail(
          [
            `The document served at ${SERVED_V1_DOCUMENT} changes v1 in ways the comparison cannot classify:`,
            ...listed(unclassified),
            'If each is safe for v1 clients, take them into the frozen document: npm run freeze-v1-contract',
          ].join('\n'),
        );
    } finally {
      await testApp.close();
    }
  });

  test('the frozen document compared with itself has no change to report', () => {
    assert.deepEqual(
      changesAfter(() => {}),
      { breaking: [], unclassified: [] },
    );
  });

  test('a change the comparison cannot classify is reported apart, not passed over', () => {
    assert.deepEqual(
      changesAfter((d) => {
        Object.assign(order(d).properties!.currency!, { contentMediaType: 'text/plain' });
      }).unclassified,
      [
        `GET /events — response 200 ${ORDER_MEDIA_TYPES}: \`data[].data.object\` anyOf.allOf.properties.currency.contentMediaType added: "text/plain"`,
        `GET /events/{eventId} — response 200 ${ORDER_MEDIA_TYPES}: \`data.object\` anyOf.allOf.properties.currency.contentMediaType added: "text/plain"`,
        `GET /orders — response 200 ${ORDER_MEDIA_TYPES}: \`data[].currency\` contentMediaType added: "text/plain"`,
        `GET /orders/{orderId} — response 200 ${ORDER_MEDIA_TYPES}: \`currency\` contentMediaType added: "text/plain"`,
        `GET /users/{userId}/orders — response 200 ${ORDER_MEDIA_TYPES}: \`data[].currency\` contentMediaType added: "text/plain"`,
        `PATCH /orders/{orderId} — response 200 ${ORDER_MEDIA_TYPES}: \`currency\` contentMediaType added: "text/plain"`,
        `POST /orders — response 201 ${ORDER_MEDIA_TYPES}: \`currency\` contentMediaType added: "text/plain"`,
        `PUT /orders/{orderId} — response 200 ${ORDER_MEDIA_TYPES}: \`currency\` contentMediaType added: "text/plain"`,
      ],
    );
  });
});

describe('breaking changes found in a copy of the frozen document', { concurrency: true }, () => {
  test('a response field of Order removed: each operation answering an order, with the field', () => {
    const lines = breakingAfter((d) => {
      delete order(d).properties!.updatedAt;
      order(d).required = order(d).required!.filter((name) => name !== 'updatedAt');
    });
    assert.deepEqual(linesOf(lines, 'GET /orders/{orderId}'), [
      `response 200 ${ORDER_MEDIA_TYPES}: \`updatedAt\` removed`,
      `response 200 ${ORDER_MEDIA_TYPES}: required "updatedAt" removed`,
    ]);
    assert.deepEqual(linesOf(lines, 'GET /orders'), [
      `response 200 ${ORDER_MEDIA_TYPES}: \`data[].updatedAt\` removed`,
      `response 200 ${ORDER_MEDIA_TYPES}: \`data[]\` required "updatedAt" removed`,
    ]);
    assert.deepEqual([...new Set(lines.map((l) => l.split(' — ', 1)[0]))].sort(), [...OPERATIONS_ANSWERING_ORDERS].sort());
  });

  test('a response field of Order renamed', () => {
    const lines = breakingAfter((d) => {
      const { updatedAt, ...others } = order(d).properties!;
      order(d).properties = { ...others, modifiedAt: updatedAt! };
      order(d).required = order(d).required!.map((name) => (name === 'updatedAt' ? 'modifiedAt' : name));
    });
    assert.deepEqual(linesOf(lines, 'POST /orders'), [
      `response 201 ${ORDER_MEDIA_TYPES}: \`updatedAt\` removed`,
      `response 201 ${ORDER_MEDIA_TYPES}: required "updatedAt" removed`,
    ]);
  });

  // The type alone: the library classifies a replaced type in a response as safe (see the helper).
  test('Order.total changed from integer to string', () => {
    const lines = breakingAfter((d) => {
      order(d).properties!.total!.type = 'string';
    });
    assert.deepEqual(linesOf(lines, 'GET /orders/{orderId}'), [
      `response 200 ${ORDER_MEDIA_TYPES}: \`total\` type changed from "integer" to "string"`,
    ]);
    assert.equal(lines.length, OPERATIONS_ANSWERING_ORDERS.length);
  });

  test('Order.total made nullable', () => {
    const lines = breakingAfter((d) => {
      order(d).properties!.total!.type = ['integer', 'null'];
    });
    assert.deepEqual(linesOf(lines, 'PUT /orders/{orderId}'), [
      `response 200 ${ORDER_MEDIA_TYPES}: \`total\` type changed from "integer" to ["integer","null"]`,
    ]);
  });

  test('a new required field in a request body', () => {
    const lines = breakingAfter((d) => {
      const body = jsonBody(operation(d, '/orders', 'post'));
      body.properties!.note = { type: 'string' };
      body.required!.push('note');
    });
    assert.deepEqual(lines, [
      'POST /orders — request body (application/json): `note` added: {"type":"string"}',
      'POST /orders — request body (application/json): required "note" added',
    ]);
  });

  test('an optional field removed from a request body that refuses unknown fields', () => {
    const lines = breakingAfter((d) => {
      delete jsonBody(operation(d, '/products', 'post')).properties!.active;
    });
    assert.deepEqual(lines, ['POST /products — request body (application/json): `active` removed']);
  });

  test('a query parameter removed', () => {
    const lines = breakingAfter((d) => {
      const op = operation(d, '/orders', 'get');
      op.parameters = op.parameters!.filter((p) => p.name !== 'minTotal');
    });
    assert.deepEqual(lines, ['GET /orders — query parameter `minTotal`: removed']);
  });

  test('a new required query parameter', () => {
    const lines = breakingAfter((d) => {
      operation(d, '/orders', 'get').parameters!.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } });
    });
    assert.deepEqual(lines, ['GET /orders — query parameter `region`: added']);
  });

  test('an enum narrowed in a request', () => {
    const lines = breakingAfter((d) => {
      const status = operation(d, '/orders', 'get').parameters!.find((p) => p.name === 'status')!;
      status.schema.enum = status.schema.enum!.filter((value) => value !== 'cancelled');
    });
    assert.deepEqual(lines, ['GET /orders — query parameter `status`: enum "cancelled" removed']);
  });

  test('a path removed', () => {
    const lines = breakingAfter((d) => {
      delete d.paths['/order-items'];
    });
    assert.deepEqual(lines, ['GET /order-items: operation removed']);
  });

  test('an operation removed', () => {
    const lines = breakingAfter((d) => {
      delete d.paths['/orders/{orderId}']!.delete;
    });
    assert.deepEqual(lines, ['DELETE /orders/{orderId}: operation removed']);
  });

  test('int32 named for an integer parameter that may exceed 2³¹', () => {
    const lines = breakingBetween(
      (d) => {
        delete parameterSchema(d, '/orders', 'minTotal').format;
      },
      (d) => {
        parameterSchema(d, '/orders', 'minTotal').format = 'int32';
      },
    );
    assert.deepEqual(lines, ['GET /orders — query parameter `minTotal`: format added: "int32"']);
  });

  test('a maxLength added to a free string parameter', () => {
    const lines = breakingAfter((d) => {
      parameterSchema(d, '/orders', 'sort').maxLength = 10;
    });
    assert.deepEqual(lines, ['GET /orders — query parameter `sort`: maxLength added: 10']);
  });

  test('a security requirement replaced by one naming a new scheme', () => {
    const lines = breakingAfter((d) => {
      d.components.securitySchemes = { ...d.components.securitySchemes, apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } };
      operation(d, '/orders', 'get').security = [{ apiKey: [] }];
    });
    assert.deepEqual(lines, [
      'GET /orders — security: 0.bearer removed (was ["orders:read"])',
      'GET /orders — security: 1 removed (was {"accessToken":[]})',
    ]);
  });

  test('a request schema moved into components with a new required field on the way', () => {
    const lines = breakingAfter((d) => {
      const body = jsonBody(operation(d, '/orders', 'post'));
      d.components.schemas.OrderCreation = {
        ...body,
        properties: { ...body.properties, note: { type: 'string' } },
        required: [...body.required!, 'note'],
      };
      operation(d, '/orders', 'post').requestBody!.content['application/json']!.schema = { $ref: '#/components/schemas/OrderCreation' };
    });
    assert.deepEqual(lines, [
      'POST /orders — request body (application/json): `note` added: {"type":"string"}',
      'POST /orders — request body (application/json): required "note" added',
    ]);
  });
});

describe('non-breaking changes in a copy of the frozen document', { concurrency: true }, () => {
  test('an optional response field added to Order', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        order(d).properties!.note = { type: 'string' };
      }),
      [],
    );
  });

  test('a new path', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        d.paths['/shipments'] = { get: { responses: { '200': { description: 'The shipments.' } } } };
      }),
      [],
    );
  });

  test('a new optional query parameter', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        operation(d, '/orders', 'get').parameters!.push({ name: 'region', in: 'query', required: false, schema: { type: 'string' } });
      }),
      [],
    );
  });

  test('descriptions changed, an operation and a field deprecated, other servers and info', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        order(d).properties!.total!.description = 'The amount to pay.';
        order(d).properties!.total!.deprecated = true;
        operation(d, '/orders', 'get').deprecated = true;
        d.servers = [{ url: 'https://api.example.com/v1' }];
        d.info = { title: 'orderpay v1', version: '1.1', description: 'Deprecated; see v2.' };
      }),
      [],
    );
  });

  // int64 holds every JSON integer, and int32 every one within ±2³¹.
  test('int64 named for an integer, int32 for one its bounds keep within 2³¹', () => {
    assert.deepEqual(
      breakingBetween(
        (d) => {
          delete parameterSchema(d, '/orders', 'customerId').format;
          delete parameterSchema(d, '/orders', 'pageSize').format;
        },
        (d) => {
          parameterSchema(d, '/orders', 'customerId').format = 'int64';
          parameterSchema(d, '/orders', 'pageSize').format = 'int32';
        },
      ),
      [],
    );
  });

  test('a security scheme added and offered beside the existing requirement', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        d.components.securitySchemes = { ...d.components.securitySchemes, pasted: { type: 'http', scheme: 'bearer' } };
        const op = operation(d, '/orders', 'get');
        op.security = [...op.security!, { pasted: [] }];
      }),
      [],
    );
  });

  test('a request schema moved into components unchanged', () => {
    assert.deepEqual(
      breakingAfter((d) => {
        d.components.schemas.OrderCreation = jsonBody(operation(d, '/orders', 'post'));
        operation(d, '/orders', 'post').requestBody!.content['application/json']!.schema = { $ref: '#/components/schemas/OrderCreation' };
      }),
      [],
    );
  });
});
