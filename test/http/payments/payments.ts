// Payments as the payments and refunds suites make and check them: every write with a fresh
// Idempotency-Key, the rows read back with SQL rather than through the store, and the contract
// every payment response keeps (no-store, the entity tag of the stored version).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../../src/db/db.ts';
import type { V1Payment as Payment, V1Refund as Refund } from '../../helpers/v1-types.ts';
import type { TestApp } from '../../helpers/app.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const VENDOR_TYPE = 'application/vnd.orderpay.v1+json';
export const MISSING_ID = 2_000_000_000;
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface WriteOptions {
  url?: string;
  headers?: Record<string, string>;
  /** Idempotency-Key; a new random one unless given. */
  key?: string;
}

/** POST /payments (or options.url) with a fresh Idempotency-Key. */
export function postPayment(
  t: TestApp,
  token: string | undefined,
  body: unknown,
  options: WriteOptions = {},
): Promise<LightMyRequestResponse> {
  return t.request(token, {
    method: 'POST',
    url: options.url ?? '/payments',
    payload: body as string,
    headers: { 'idempotency-key': options.key ?? randomUUID(), ...options.headers },
  });
}

/** POST /payments/{id}/refunds with a fresh Idempotency-Key. */
export function postRefund(
  t: TestApp,
  token: string | undefined,
  paymentId: number,
  body: unknown,
  options: Omit<WriteOptions, 'url'> & { prefix?: string } = {},
) {
  return postPayment(t, token, body, { ...options, url: `${options.prefix ?? ''}/payments/${paymentId}/refunds` });
}

/** A payment the test needs as a precondition: 201 is asserted, the representation returned. */
export async function makePayment(
  t: TestApp,
  token: string,
  body: { amount: number; currency: string; orderId?: number },
): Promise<Payment> {
  const res = await postPayment(t, token, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** A refund the test needs as a precondition (201 asserted). */
export async function makeRefund(t: TestApp, token: string, paymentId: number, body: { amount?: number }): Promise<Refund> {
  const res = await postRefund(t, token, paymentId, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const PAYMENT_COLUMNS = `id, status, amount, currency, amount_refunded AS "amountRefunded", order_id AS "orderId", customer_id AS "customerId",
  decline_code AS "declineCode", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The representation as stored. */
export async function readStoredPayment(db: Db, id: number): Promise<Payment> {
  const { rows } = await db.query<Payment>(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1`, [id]);
  return rows[0]!;
}

export interface PaymentRow extends Payment {
  clientId: string;
  processor: string;
  processorReference: string;
  version: number;
}

/** The whole row, with what the representation leaves out. */
export async function readPaymentRow(db: Db, id: number): Promise<PaymentRow> {
  const { rows } = await db.query<PaymentRow>(
    `SELECT ${PAYMENT_COLUMNS}, client_id AS "clientId", processor, processor_reference AS "processorReference", version FROM payments WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

/** Every payment row of an order, oldest first. */
export async function paymentsOfOrder(db: Db, orderId: number): Promise<PaymentRow[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM payments WHERE order_id = $1 ORDER BY id', [orderId]);
  return Promise.all(rows.map((r) => readPaymentRow(db, r.id)));
}

/** Every payment row that belongs to this user, oldest first. */
export async function paymentsOfCustomer(db: Db, customerId: number): Promise<PaymentRow[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM payments WHERE customer_id = $1 ORDER BY id', [customerId]);
  return Promise.all(rows.map((r) => readPaymentRow(db, r.id)));
}

export interface RefundRow extends Refund {
  processorReference: string;
}

/** A payment's refund rows, oldest first. */
export async function readStoredRefunds(db: Db, paymentId: number): Promise<RefundRow[]> {
  const { rows } = await db.query<RefundRow>(
    `SELECT r.id, r.payment_id AS "paymentId", r.amount, p.currency, r.created_at AS "createdAt", r.processor_reference AS "processorReference"
       FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.payment_id = $1 ORDER BY r.id`,
    [paymentId],
  );
  return rows;
}

/** A refund as the API represents it. */
export const refundRepresentation = ({ processorReference: _ref, ...refund }: RefundRow): Refund => refund;

/** The idempotency key rows holding this key (keys are random UUIDs, so any caller's). */
export async function keyRows(
  db: Db,
  key: string,
): Promise<{ method: string; path: string; state: string; responseStatus: number | null }[]> {
  const { rows } = await db.query<{ method: string; path: string; state: string; responseStatus: number | null }>(
    'SELECT method, path, state, response_status AS "responseStatus" FROM idempotency_keys WHERE key = $1',
    [key],
  );
  return rows;
}

export const paymentTag = (id: number, version: number) => `"pa${id}.${version}.v1"`;
/** A refund never changes: its tag always names revision 1. */
export const refundTag = (id: number) => `"re${id}.1.v1"`;

/**
 * A payment response: the status, content type, Cache-Control: no-store, Vary, the tag of the
 * stored version, and the body equal to the stored representation.
 */
export async function expectPayment(db: Db, res: LightMyRequestResponse, status: number, contentType = JSON_TYPE): Promise<Payment> {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.vary, 'Accept');
  const body = res.json();
  const row = await readPaymentRow(db, body.id);
  assert.equal(res.headers.etag, paymentTag(body.id, row.version));
  assert.deepEqual(body, await readStoredPayment(db, body.id));
  assert.match(body.createdAt, TIMESTAMP);
  // Recorded before the processor was asked; updated when it decided (and by every refund).
  assert.ok(body.updatedAt >= body.createdAt, `${body.updatedAt} >= ${body.createdAt}`);
  return body;
}

export interface OrderRow {
  id: number;
  status: string;
  customerId: number;
  total: number;
  currency: string;
  version: number;
  updatedAt: string;
}

/** The order row as stored, with its version. */
export async function readOrderRow(db: Db, id: number): Promise<OrderRow> {
  const { rows } = await db.query<OrderRow>(
    'SELECT id, status, customer_id AS "customerId", total, currency, version, updated_at AS "updatedAt" FROM orders WHERE id = $1',
    [id],
  );
  return rows[0]!;
}

/** Events recorded about a payment or its order, oldest first. */
export async function eventsAbout(t: TestApp, payment: { id: number; orderId: number }): Promise<string[]> {
  const { rows } = await t.db.query<{ type: string }>(
    `SELECT type FROM events WHERE (object_type = 'payment' AND (object ->> 'id')::bigint = $1)
        OR (object_type = 'order' AND (object ->> 'id')::bigint = $2) ORDER BY seq`,
    [payment.id, payment.orderId],
  );
  return rows.map((row) => row.type);
}
