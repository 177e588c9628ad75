// What the idempotency suites share: POSTs carrying an Idempotency-Key, the replay check, and the
// rows (keys, payments, orders) a test reads back to prove what was stored.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Queryable } from '../../../src/db/db.ts';
import { fingerprintRequest } from '../../../src/idempotency/idempotency.rules.ts';
import { PUBLIC_URL, type TestApp } from '../../helpers/app.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A key no other test uses. */
export const newKey = (): string => `key-${randomUUID()}`;

/**
 * POST through t.request (so the response is also checked against the OpenAPI document). A string
 * payload is sent as those exact bytes, as JSON: to send the same body with its keys reordered.
 */
export function postWithKey(
  t: TestApp,
  token: string | undefined,
  url: string,
  body: unknown,
  key?: string,
  headers: Record<string, string> = {},
) {
  return t.request(token, {
    method: 'POST',
    url,
    payload: body as string,
    headers: {
      ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
  });
}

/**
 * Headers of every response that are not the stored response's: its own id, the time, the marker,
 * and what is left of the rate limit (a retry is counted like any request; docs/api.md).
 */
const PER_RESPONSE_HEADERS = new Set(['x-request-id', 'date', 'idempotent-replayed', 'ratelimit']);

const storedHeaders = (res: LightMyRequestResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_RESPONSE_HEADERS.has(name)));

/**
 * The retry got the first response again: the same status, the same bytes and every other header
 * (Location, ETag, Content-Type, Cache-Control, Vary, Retry-After…), marked Idempotent-Replayed
 * (the first answer is not), under its own request id.
 */
export function expectReplayOf(first: LightMyRequestResponse, retry: LightMyRequestResponse): void {
  assert.equal(retry.statusCode, first.statusCode, retry.body);
  assert.equal(retry.body, first.body);
  assert.deepEqual(storedHeaders(retry), storedHeaders(first));
  for (const name of ['content-type', 'cache-control'] as const) assert.ok(first.headers[name], name);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.notEqual(retry.headers['x-request-id'], first.headers['x-request-id']);
}

/** A response that was performed, not replayed. */
export function expectNotReplayed(res: LightMyRequestResponse): void {
  assert.equal(res.headers['idempotent-replayed'], undefined);
}

/**
 * The whole 201 of a payment: headers and body. Returns the body. `prefix` is '/v1' when the
 * request used the versioned path (the Location keeps it).
 */
export function expectPaymentCreated(
  res: LightMyRequestResponse,
  expected: {
    amount: number;
    currency: string;
    orderId: number | null;
    customerId: number | null;
    status?: string;
    declineCode?: string | null;
  },
  prefix = '',
): Record<string, unknown> & { id: number } {
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json();
  assert.equal(typeof body.id, 'number');
  assert.equal(res.headers.location, `${PUBLIC_URL}${prefix}/payments/${body.id}`);
  assert.equal(res.headers.etag, `"pa${body.id}.1.v1"`);
  assert.match(body.createdAt, TIMESTAMP);
  assert.ok(body.updatedAt >= body.createdAt);
  assert.deepEqual(body, {
    id: body.id,
    status: expected.status ?? 'succeeded',
    amount: expected.amount,
    currency: expected.currency,
    amountRefunded: 0,
    orderId: expected.orderId,
    customerId: expected.customerId,
    declineCode: expected.declineCode ?? null,
    createdAt: body.createdAt,
    updatedAt: body.updatedAt,
  });
  return body;
}

export interface KeyRow {
  id: number;
  method: string;
  path: string;
  fingerprint: string;
  state: string;
  lock_token: string;
  operation_id: string;
  lock_lapsed: boolean;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  expired: boolean;
  /** What phase 1 recorded (a payment's id): where a retry resumes. */
  recovery_point: number | null;
}

/** A released claim: still bound to its request, no response, its lock lapsed for the retry to take. */
export function assertReleased(row: KeyRow | undefined): void {
  assert.deepEqual([row?.state, row?.response_status, row?.response_body, row?.lock_lapsed], ['in_flight', null, null, true]);
}

/** The key's row for this caller, or undefined. */
export async function findKeyRow(db: Queryable, owner: { clientId: string; subject: string }, key: string): Promise<KeyRow | undefined> {
  const { rows } = await db.query<KeyRow>(
    `SELECT id, method, path, fingerprint, state, lock_token, operation_id::text, locked_until <= now() AS lock_lapsed,
            response_status, response_headers, response_body, expires_at <= now() AS expired, recovery_point
       FROM idempotency_keys WHERE client_id = $1 AND subject = $2 AND key = $3`,
    [owner.clientId, owner.subject, key],
  );
  return rows[0];
}

/** A customer's token as the key owner it makes: test tokens are issued to client "test-client". */
export const customerOwner = (userId: number, clientId = 'test-client') => ({ clientId, subject: String(userId) });

export interface PaymentRowSummary {
  id: number;
  order_id: number | null;
  customer_id: number | null;
  client_id: string;
  amount: number;
  currency: string;
  status: string;
}

/** The payments whose customer is this user, oldest first. */
export async function paymentsOfCustomer(db: Queryable, customerId: number): Promise<PaymentRowSummary[]> {
  const { rows } = await db.query<PaymentRowSummary>(
    'SELECT id, order_id, customer_id, client_id, amount, currency, status FROM payments WHERE customer_id = $1 ORDER BY id',
    [customerId],
  );
  return rows;
}

/** Status and version of an order: a payment moves it to paid exactly once (version 1 → 2). */
export async function orderState(db: Queryable, orderId: number): Promise<{ status: string; version: number }> {
  const { rows } = await db.query<{ status: string; version: number }>('SELECT status, version FROM orders WHERE id = $1', [orderId]);
  return rows[0]!;
}

/**
 * An in-flight claim on a customer's key as a process that died would have left it; lockedUntil
 * is an interval from now ('-1 second': lapsed, '30 seconds': live).
 */
export async function insertClaim(
  db: Queryable,
  userId: number,
  key: string,
  body: unknown,
  lockedUntil: string,
  path = '/payments',
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO idempotency_keys (client_id, subject, key, method, path, fingerprint, state, operation_id, lock_token, locked_until, expires_at)
     VALUES ('test-client', $1, $2, 'POST', $3, $4, 'in_flight', gen_random_uuid(), 'dead-process', now() + $5::interval, now() + interval '1 day') RETURNING id`,
    [String(userId), key, path, fingerprintRequest(1, body), lockedUntil],
  );
  return rows[0]!.id;
}
