// Webhook endpoints: registered, read, replaced and deleted by staff (or a service client) holding
// webhooks:write / webhooks:read, with Location, ETag and If-Match; the signing secret shown once,
// stored sealed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServiceToken } from '../../helpers/actors.ts';
import { PUBLIC_URL, setUpTestApp } from '../../helpers/app.ts';
import { readableMeta } from '../../helpers/paging.ts';
import { expectProblem, pagingLinks } from '../../helpers/problems.ts';
import { createSecretBox } from '../../../src/webhooks/secrets.ts';
import {
  JSON_TYPE,
  MISSING_ID,
  PUBLIC_URL_LITERAL,
  registerEndpoint,
  SECRET,
  send as sendWith,
  shownEndpoint,
  storedEndpoint,
  TIMESTAMP,
  webhookStaffToken,
  webhookTestConfig,
  type Method,
} from './webhooks.ts';

const t = setUpTestApp(webhookTestConfig());
const send = (method: Method, token: string | undefined, url: string, payload?: unknown, headers?: Record<string, string>) =>
  sendWith(t, method, token, url, payload, headers);
const staffToken = () => webhookStaffToken(t);
const openSecret = (sealed: string) => createSecretBox(t.db, t.config.webhooks.secretKey).open(sealed);

async function endpointCount(): Promise<number> {
  return (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0]!.n;
}

describe('POST /webhook-endpoints', () => {
  for (const [prefix, version] of [
    ['', 1],
    ['/v2', 2],
    ['/v3', 3],
  ] as const) {
    test(`staff with webhooks:write → 201 at ${prefix}/webhook-endpoints: Location, ETag, the endpoint and its secret, defaults applied`, async () => {
      const res = await send('POST', await staffToken(), `${prefix}/webhook-endpoints`, {
        url: 'https://93.184.215.14:443/hooks?shop=1',
        enabledEvents: ['order.paid', 'refund.succeeded'],
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/webhook-endpoints/${body.id}`);
      assert.equal(res.headers.etag, `"we${body.id}.1.v${version}"`);
      assert.match(body.secret, SECRET);
      assert.match(body.createdAt, TIMESTAMP);
      assert.deepEqual(body, {
        id: body.id,
        url: 'https://93.184.215.14/hooks?shop=1',
        enabledEvents: ['order.paid', 'refund.succeeded'],
        // The latest version; before v3, v2 (the latest then).
        apiVersion: version === 3 ? 3 : 2,
        description: '',
        disabled: false,
        disabledReason: null,
        failingSince: null,
        lastSucceededAt: null,
        backlog: { pending: 0, oldestDueAt: null },
        previousSecretExpiresAt: null,
        createdAt: body.createdAt,
        updatedAt: body.createdAt,
        secret: body.secret,
      });
      const row = (await storedEndpoint(t.db, body.id))!;
      const { secret, ...shown } = body;
      assert.deepEqual(shownEndpoint(row), shown);
      assert.equal(row.version, 1);
      assert.equal(row.previousSecret, null);
      // Sealed at rest (AES-256-GCM): not the secret, and it opens to it.
      assert.match(row.secret, /^v1\./);
      assert.ok(!row.secret.includes(secret.slice('whsec_'.length)));
      assert.equal(await openSecret(row.secret), secret);
    });
  }

  test('a service client with webhooks:write registers an endpoint with every field given', async () => {
    const service = await createServiceToken(t, ['webhooks:write']);
    const res = await send('POST', service, '/webhook-endpoints', {
      url: PUBLIC_URL_LITERAL,
      enabledEvents: ['*'],
      apiVersion: 1,
      description: 'Accounting system',
      disabled: true,
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(
      [body.enabledEvents, body.apiVersion, body.description, body.disabled, body.disabledReason],
      [['*'], 1, 'Accounting system', true, 'requested'],
    );
    const row = (await storedEndpoint(t.db, body.id))!;
    assert.equal(row.disabledReason, 'requested');
    assert.deepEqual(shownEndpoint(row), shownOf(body));
  });

  test('every endpoint gets a secret of its own', async () => {
    const token = await staffToken();
    const [a, b] = [await registerEndpoint(t, token), await registerEndpoint(t, token)];
    assert.notEqual(a.secret, b.secret);
  });

  const invalid: [string, unknown, { pointer: string; detail: string }[], string?][] = [
    ['a missing url', { enabledEvents: ['*'] }, [{ pointer: '/url', detail: '/url is required' }]],
    ['missing enabledEvents', { url: PUBLIC_URL_LITERAL }, [{ pointer: '/enabledEvents', detail: '/enabledEvents is required' }]],
    [
      'an empty enabledEvents',
      { url: PUBLIC_URL_LITERAL, enabledEvents: [] },
      [{ pointer: '/enabledEvents', detail: '/enabledEvents must NOT have fewer than 1 items' }],
    ],
    [
      'a type twice',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['order.paid', 'order.paid'] },
      [{ pointer: '/enabledEvents', detail: '/enabledEvents must NOT have duplicate items (items ## 1 and 0 are identical)' }],
    ],
    [
      'an unknown event type',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['order.paid', 'order.exploded'] },
      [{ pointer: '/enabledEvents/1', detail: '"order.exploded" is not an event type' }],
      '/enabledEvents/1 "order.exploded" is not an event type',
    ],
    [
      'the ping type',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['webhook_endpoint.ping'] },
      [
        {
          pointer: '/enabledEvents/0',
          detail: '"webhook_endpoint.ping" is sent by a ping to the endpoint pinged only; it cannot be subscribed to',
        },
      ],
      '/enabledEvents/0 "webhook_endpoint.ping" is sent by a ping to the endpoint pinged only; it cannot be subscribed to',
    ],
    [
      '"*" beside a type',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['order.paid', '*'] },
      [{ pointer: '/enabledEvents/1', detail: '"*" subscribes to every type and stands alone' }],
      '/enabledEvents/1 "*" subscribes to every type and stands alone',
    ],
    [
      'a malformed event type',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['ORDER PAID'] },
      [{ pointer: '/enabledEvents/0', detail: '"ORDER PAID" is not an event type' }],
      '/enabledEvents/0 "ORDER PAID" is not an event type',
    ],
    [
      'an API version a v1 request cannot pin an endpoint to (v3)',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], apiVersion: 3 },
      [{ pointer: '/apiVersion', detail: '/apiVersion must be <= 2' }],
    ],
    [
      'a url that is not a URL',
      { url: 'hooks.example.com', enabledEvents: ['*'] },
      [{ pointer: '/url', detail: '/url must match format "uri"' }],
    ],
    [
      'a secret in the body',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], secret: 'whsec_mine' },
      [{ pointer: '/secret', detail: '/secret is not a known field' }],
    ],
    [
      'a description over 500 characters',
      { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], description: 'x'.repeat(501) },
      [{ pointer: '/description', detail: '/description must NOT have more than 500 characters' }],
    ],
  ];
  for (const [name, body, errors, detail] of invalid) {
    test(`${name} → 400 REQUEST_BODY_INVALID; nothing written`, async () => {
      const before = await endpointCount();
      const res = await send('POST', await staffToken(), '/webhook-endpoints', body);
      expectProblem(res, 400, 'REQUEST_BODY_INVALID', '/webhook-endpoints', detail ?? errors.map((e) => e.detail).join('; '), { errors });
      assert.equal(await endpointCount(), before);
    });
  }
});

/** The representation of a creation's answer, without its secret. */
function shownOf({ secret: _secret, ...endpoint }: Record<string, unknown>) {
  return endpoint;
}

describe('GET /webhook-endpoints and GET /webhook-endpoints/{id}', () => {
  test('one endpoint: 200 with a strong ETag and never the secret; If-None-Match → 304', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token, { description: 'CRM' });
    const reader = await webhookStaffToken(t, ['webhooks:read']);
    const res = await send('GET', reader, `/webhook-endpoints/${made.id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    // Its health is as of the read: no cache may answer with it (decision 0118).
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers.etag, `"we${made.id}.1.v1"`);
    assert.deepEqual(res.json(), shownOf({ ...made }));
    assert.ok(!res.body.includes(made.secret.slice('whsec_'.length)));
    assert.ok(!('secret' in res.json()));
    for (const header of [`"we${made.id}.1.v1"`, `W/"we${made.id}.1.v1"`, '*']) {
      const notModified = await send('GET', reader, `/webhook-endpoints/${made.id}`, undefined, { 'if-none-match': header });
      assert.equal(notModified.statusCode, 304, header);
      assert.equal(notModified.body, '');
      assert.equal(notModified.headers.etag, `"we${made.id}.1.v1"`);
      assert.equal(notModified.headers['cache-control'], 'no-store');
    }
    const v2 = await send('GET', reader, `/v2/webhook-endpoints/${made.id}`, undefined, { 'if-none-match': `"we${made.id}.1.v1"` });
    assert.equal(v2.statusCode, 200);
    assert.equal(v2.headers.etag, `"we${made.id}.1.v2"`);
  });

  test('the collection: a page of endpoints without secrets, the disabled filter, sort keys createdAt and id', async () => {
    const token = await staffToken();
    const made = [
      await registerEndpoint(t, token, { disabled: true }),
      await registerEndpoint(t, token),
      await registerEndpoint(t, token, { disabled: true }),
    ];
    const mine = new Set(made.map((e) => e.id));
    const [a, b, c] = made.map((e) => e.id);
    const reader = await webhookStaffToken(t, ['webhooks:read']);
    const res = await send('GET', reader, '/webhook-endpoints?sort=-id&pageSize=1');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    // A v1 request lists the endpoints pinned to v1 and v2 (one pinned to v3 is not there for it).
    const total = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE api_version <= 2')).rows[0]!.n;
    // Newest first by id: the next page starts after the newest endpoint, the one listed.
    const [newest] = res.json().data;
    assert.deepEqual(readableMeta(res.json().meta), {
      ...{ total, page: 1, pageSize: 1, totalPages: total },
      ...{ nextCursor: { v: [newest.id], n: 0 }, prevCursor: null },
    });
    assert.ok(pagingLinks(res)?.startsWith(`<${PUBLIC_URL}/webhook-endpoints?sort=-id&pageSize=1&page=1>; rel="first"`), pagingLinks(res));
    const listed = async (query: string) => {
      const page = await send('GET', reader, `/webhook-endpoints?pageSize=100&${query}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.ok(!page.body.includes('secret') && !page.body.includes('whsec_'));
      return (page.json().data as { id: number; disabled: boolean }[]).filter((e) => mine.has(e.id));
    };
    assert.deepEqual(
      (await listed('sort=-createdAt,-id')).map((e) => e.id),
      [c, b, a],
    );
    assert.deepEqual(
      (await listed('disabled=true')).map((e) => e.id),
      [a, c],
    );
    assert.deepEqual(
      (await listed('disabled=false')).map((e) => e.id),
      [b],
    );
    const first = (await listed('sort=id')).find((e) => e.id === a);
    assert.deepEqual(first, shownOf({ ...made[0]! }));
  });

  test('unknown parameters and sort keys → 400 naming them', async () => {
    const reader = await webhookStaffToken(t, ['webhooks:read']);
    const detail = '"url" is not a sort key of this collection; use createdAt, id';
    expectProblem(await send('GET', reader, '/webhook-endpoints?sort=url'), 400, 'QUERY_UNKNOWN_SORT_KEY', '/webhook-endpoints', detail, {
      errors: [{ parameter: 'sort', detail }],
    });
    const unknown = 'query parameter "url" is not supported by this collection';
    expectProblem(await send('GET', reader, '/webhook-endpoints?url=x'), 400, 'QUERY_UNKNOWN_PARAMETER', '/webhook-endpoints', unknown, {
      errors: [{ parameter: 'url', detail: unknown }],
    });
  });

  test('a missing endpoint → 404 WEBHOOK_ENDPOINT_NOT_FOUND; a malformed id → 400', async () => {
    const reader = await webhookStaffToken(t, ['webhooks:read']);
    expectProblem(
      await send('GET', reader, `/webhook-endpoints/${MISSING_ID}`),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
      `/webhook-endpoints/${MISSING_ID}`,
      `Webhook endpoint ${MISSING_ID} does not exist.`,
    );
    const detail = 'path parameter "webhookEndpointId" must be integer';
    expectProblem(await send('GET', reader, '/webhook-endpoints/we1'), 400, 'REQUEST_PARAMETER_INVALID', '/webhook-endpoints/we1', detail, {
      errors: [{ detail, parameter: 'webhookEndpointId' }],
    });
  });
});

describe('PUT /webhook-endpoints/{id}', () => {
  const body = { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], apiVersion: 2, description: '', disabled: false };

  test('a complete replacement → 200 with the new representation and ETag; the secret is kept', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const before = (await storedEndpoint(t.db, made.id))!;
    const res = await send('PUT', token, `/webhook-endpoints/${made.id}`, {
      url: 'https://[2606:4700:4700::1111]/v2/hooks',
      enabledEvents: ['product.updated', 'order.created'],
      apiVersion: 1,
      description: 'Catalogue sync',
      disabled: true,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.etag, `"we${made.id}.2.v1"`);
    assert.equal(res.headers.location, undefined);
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.deepEqual(row, {
      ...before,
      url: 'https://[2606:4700:4700::1111]/v2/hooks',
      enabledEvents: ['product.updated', 'order.created'],
      apiVersion: 1,
      description: 'Catalogue sync',
      disabled: true,
      disabledReason: 'requested',
      updatedAt: row.updatedAt,
      version: 2,
    });
    assert.notEqual(row.updatedAt, before.updatedAt);
    assert.deepEqual(res.json(), shownEndpoint(row));
    assert.ok(!('secret' in res.json()));
  });

  test('the same settings again (enabledEvents in another order) → 200, version, ETag and updatedAt unchanged', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token, { enabledEvents: ['order.paid', 'order.created'] });
    const before = (await storedEndpoint(t.db, made.id))!;
    for (const enabledEvents of [
      ['order.paid', 'order.created'],
      ['order.created', 'order.paid'],
    ]) {
      const res = await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...body, enabledEvents });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers.etag, `"we${made.id}.1.v1"`);
      assert.deepEqual(await storedEndpoint(t.db, made.id), before);
    }
  });

  test('If-Match: the current tag or * → 200; stale or weak → 412, nothing changes', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const put = (description: string, ifMatch: string) =>
      send('PUT', token, `/webhook-endpoints/${made.id}`, { ...body, description }, { 'if-match': ifMatch });
    assert.equal((await put('one', `"we${made.id}.1.v1"`)).statusCode, 200);
    assert.equal((await put('two', '*')).statusCode, 200);
    const before = (await storedEndpoint(t.db, made.id))!;
    assert.equal(before.version, 3);
    for (const tag of [`"we${made.id}.1.v1"`, `W/"we${made.id}.3.v1"`, `"we${made.id}.3.v2"`]) {
      expectProblem(
        await put('three', tag),
        412,
        'REQUEST_PRECONDITION_FAILED',
        `/webhook-endpoints/${made.id}`,
        'If-Match does not match the current entity tag; read the resource again.',
        { currentEtag: `"we${made.id}.3.v1"` },
      );
    }
    assert.deepEqual(await storedEndpoint(t.db, made.id), before);
  });

  test('a missing field, an unknown one, a refused url → 400; nothing changes', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const before = (await storedEndpoint(t.db, made.id))!;
    const { disabled: _disabled, ...partial } = body;
    expectProblem(
      await send('PUT', token, `/webhook-endpoints/${made.id}`, partial),
      400,
      'REQUEST_BODY_INVALID',
      `/webhook-endpoints/${made.id}`,
      '/disabled is required',
      { errors: [{ pointer: '/disabled', detail: '/disabled is required' }] },
    );
    expectProblem(
      await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...body, id: made.id }),
      400,
      'REQUEST_BODY_INVALID',
      `/webhook-endpoints/${made.id}`,
      '/id is not a known field',
      { errors: [{ pointer: '/id', detail: '/id is not a known field' }] },
    );
    // The url is checked again on every replacement, as on creation.
    const detail = "The url's host 10.0.0.8 is refused: 10.0.0.8 is a private address; webhooks go to public addresses only.";
    expectProblem(
      await send('PUT', token, `/webhook-endpoints/${made.id}`, { ...body, url: 'https://10.0.0.8/hooks' }),
      400,
      'WEBHOOK_URL_REFUSED',
      `/webhook-endpoints/${made.id}`,
      detail,
      { errors: [{ pointer: '/url', detail: '10.0.0.8 is a private address' }] },
    );
    assert.deepEqual(await storedEndpoint(t.db, made.id), before);
  });

  test('a missing endpoint → 404, before its body is judged', async () => {
    const token = await staffToken();
    for (const payload of [body, { ...body, url: 'https://127.0.0.1/' }]) {
      expectProblem(
        await send('PUT', token, `/webhook-endpoints/${MISSING_ID}`, payload),
        404,
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        `/webhook-endpoints/${MISSING_ID}`,
        `Webhook endpoint ${MISSING_ID} does not exist.`,
      );
    }
  });
});

describe('DELETE /webhook-endpoints/{id}', () => {
  test('204; the endpoint, its secrets and its deliveries are gone; deleting again → 404', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const ping = await send('POST', token, `/webhook-endpoints/${made.id}/pings`);
    assert.equal(ping.statusCode, 202, ping.body);
    const res = await send('DELETE', token, `/webhook-endpoints/${made.id}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(await storedEndpoint(t.db, made.id), undefined);
    const deliveries = await t.db.query('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1', [made.id]);
    assert.equal(deliveries.rows.length, 0);
    for (const method of ['GET', 'DELETE'] as const) {
      expectProblem(
        await send(method, token, `/webhook-endpoints/${made.id}`),
        404,
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        `/webhook-endpoints/${made.id}`,
        `Webhook endpoint ${made.id} does not exist.`,
      );
    }
  });

  test('If-Match: a stale tag → 412 and the endpoint stays; the current one → 204', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const put = await send('PUT', token, `/webhook-endpoints/${made.id}`, {
      url: made.url,
      enabledEvents: ['*'],
      apiVersion: 2,
      description: 'changed',
      disabled: false,
    });
    assert.equal(put.statusCode, 200);
    expectProblem(
      await send('DELETE', token, `/webhook-endpoints/${made.id}`, undefined, { 'if-match': `"we${made.id}.1.v1"` }),
      412,
      'REQUEST_PRECONDITION_FAILED',
      `/webhook-endpoints/${made.id}`,
      'If-Match does not match the current entity tag; read the resource again.',
      { currentEtag: `"we${made.id}.2.v1"` },
    );
    assert.ok(await storedEndpoint(t.db, made.id));
    const deleted = await send('DELETE', token, `/webhook-endpoints/${made.id}`, undefined, { 'if-match': `"we${made.id}.2.v1"` });
    assert.equal(deleted.statusCode, 204);
    assert.equal(await storedEndpoint(t.db, made.id), undefined);
  });
});

describe('POST /webhook-endpoints/{id}/secret-rotations', () => {
  const DAY_MS = 24 * 60 * 60 * 1000;

  test('a new secret, shown once; the previous one kept sealed and signing for 24 hours', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const res = await send('POST', token, `/webhook-endpoints/${made.id}/secret-rotations`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.match(body.secret, SECRET);
    assert.notEqual(body.secret, made.secret);
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.equal(row.version, 2);
    assert.equal(await openSecret(row.secret), body.secret);
    assert.equal(await openSecret(row.previousSecret!), made.secret);
    assert.equal(Date.parse(row.previousSecretExpiresAt!) - Date.parse(row.updatedAt), DAY_MS);
    assert.deepEqual(body, { ...shownEndpoint(row), secret: body.secret });
    // Reads show when the previous secret stops signing, never a secret.
    const read = await send('GET', token, `/webhook-endpoints/${made.id}`);
    assert.deepEqual(read.json(), shownEndpoint(row));
    assert.equal(read.headers.etag, `"we${made.id}.2.v1"`);
    assert.ok(!read.body.includes(body.secret.slice('whsec_'.length)) && !read.body.includes(made.secret.slice('whsec_'.length)));
  });

  test('a second rotation: the secret of the first becomes the previous one, the original stops at once', async () => {
    const token = await staffToken();
    const made = await registerEndpoint(t, token);
    const first = (await send('POST', token, `/webhook-endpoints/${made.id}/secret-rotations`)).json();
    const second = (await send('POST', token, `/webhook-endpoints/${made.id}/secret-rotations`)).json();
    const row = (await storedEndpoint(t.db, made.id))!;
    assert.equal(await openSecret(row.secret), second.secret);
    assert.equal(await openSecret(row.previousSecret!), first.secret);
    assert.equal(Date.parse(row.previousSecretExpiresAt!) - Date.parse(row.updatedAt), DAY_MS);
    assert.equal(row.version, 3);
  });

  test('a missing endpoint → 404', async () => {
    expectProblem(
      await send('POST', await staffToken(), `/webhook-endpoints/${MISSING_ID}/secret-rotations`),
      404,
      'WEBHOOK_ENDPOINT_NOT_FOUND',
      `/webhook-endpoints/${MISSING_ID}/secret-rotations`,
      `Webhook endpoint ${MISSING_ID} does not exist.`,
    );
  });
});
