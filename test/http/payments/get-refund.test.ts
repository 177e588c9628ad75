// GET /payments/{paymentId}/refunds/{refundId}: the refund with its strong entity tag (a refund
// never changes, so one tag for its life), never cached (no-store, on 304 too), and revalidation
// with If-None-Match (RFC 9110 §13.1.2).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createCustomer, createStaffToken, get } from '../../helpers/actors.ts';
import { setUpTestApp } from '../../helpers/app.ts';
import { expectTagged, notModifiedCheck } from '../../helpers/conditional.ts';
import { expectProblem } from '../../helpers/problems.ts';
import {
  JSON_TYPE,
  makePayment,
  makeRefund,
  paymentTag,
  readStoredRefunds,
  refundRepresentation,
  refundTag,
  VENDOR_TYPE,
} from './payments.ts';

const t = setUpTestApp();

/** A customer's payment of 1000 EUR with a refund of 300 by staff, and the refund's path and tag. */
async function refunded() {
  const customer = await createCustomer(t);
  const payment = await makePayment(t, customer.token, { amount: 1000, currency: 'EUR' });
  const staff = await createStaffToken(t);
  const refund = await makeRefund(t, staff, payment.id, { amount: 300 });
  return { ...customer, staff, payment, refund, path: `/payments/${payment.id}/refunds/${refund.id}`, etag: refundTag(refund.id) };
}

function expectRefund(res: LightMyRequestResponse, etag: string, body: unknown, contentType = JSON_TYPE): void {
  expectTagged(res, { etag, cacheControl: 'no-store', body, contentType });
}

const expectNotModified = notModifiedCheck('no-store');

describe('GET /payments/{paymentId}/refunds/{refundId}: ETag and If-None-Match', () => {
  test('200 with the refund as stored and a strong ETag, the one its POST answered with', async () => {
    const { token, staff, payment, refund, path, etag } = await refunded();
    assert.doesNotMatch(etag, /^W\//);
    const [stored] = await readStoredRefunds(t.db, payment.id);
    assert.deepEqual(refundRepresentation(stored!), refund);
    for (const caller of [token, staff]) expectRefund(await get(t, caller, path), etag, refund);
    expectRefund(await get(t, token, `/v1${path}`), etag, refund);
    expectRefund(await get(t, token, path, { accept: VENDOR_TYPE }), etag, refund, `${VENDOR_TYPE}; charset=utf-8`);
  });

  test('the tag, its weak form, a list holding it, or * → 304 without a body', async () => {
    const { token, path, etag } = await refunded();
    for (const header of [etag, `W/${etag}`, `"x", ${etag}`, '*']) {
      expectNotModified(await get(t, token, path, { 'if-none-match': header }), etag);
    }
    expectNotModified(await get(t, token, `/v1${path}`, { 'if-none-match': etag }), etag);
  });

  test('the tag stays while the payment changes: a later refund does not revalidate it away', async () => {
    const { token, staff, payment, path, etag } = await refunded();
    await makeRefund(t, staff, payment.id, { amount: 100 });
    expectNotModified(await get(t, token, path, { 'if-none-match': etag }), etag);
  });

  test("tags that do not match (another refund's, the payment's, another version's) → 200 with the refund", async () => {
    const { token, staff, payment, refund, path, etag } = await refunded();
    const other = await makeRefund(t, staff, payment.id, { amount: 100 });
    const id = refund.id;
    for (const header of [refundTag(other.id), paymentTag(id, 1), paymentTag(payment.id, 2), `"re${id}.2.v1"`, `"re${id}.1.v2"`, '""']) {
      expectRefund(await get(t, token, path, { 'if-none-match': header }), etag, refund);
    }
  });

  test("If-None-Match changes nothing of who may read: another customer's → 404; malformed → 400", async () => {
    const { token, payment, path, etag } = await refunded();
    const other = await createCustomer(t);
    expectProblem(
      await get(t, other.token, path, { 'if-none-match': etag }),
      404,
      'PAYMENT_NOT_FOUND',
      path,
      `Payment ${payment.id} does not exist.`,
    );
    const detail = 'If-None-Match must be "*" or a comma-separated list of quoted entity tags';
    expectProblem(
      await get(t, token, path, { 'if-none-match': etag.slice(1, -1) }),
      400,
      'REQUEST_HEADER_INVALID',
      path,
      'If-None-Match must be "*" or a list of entity tags.',
      { errors: [{ parameter: 'If-None-Match', detail }] },
    );
  });
});
