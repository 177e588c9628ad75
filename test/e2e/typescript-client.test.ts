// The typed client (clients/typescript/) against a live server on a real socket: the example
// places a v2 order, pays it with an Idempotency-Key, reads it back, and its retry with the same
// key is replayed (Idempotent-Replayed: true); run as a process too, as its README says.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { API_VERSION, createOrderpayClient } from '../../clients/typescript/client.ts';
import { placeAndPayOrder } from '../../clients/typescript/example.ts';
import { createCustomer } from '../helpers/actors.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createProduct } from '../helpers/factories.ts';

const PORT = 29_310;
const SERVER_URL = `http://127.0.0.1:${PORT}`;
const EXAMPLE = fileURLToPath(new URL('../../clients/typescript/example.ts', import.meta.url));

describe('the typed TypeScript client against a live server', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: PORT });
  });
  after(() => t.close());

  test('places an order, pays it with an Idempotency-Key, reads it back; the retry is replayed', async () => {
    const { user, token } = await createCustomer(t);
    const product = await createProduct(t.db, { price: 1250, currency: 'EUR' });
    const client = createOrderpayClient({ serverUrl: SERVER_URL, accessToken: () => token });

    const { placed, payment, readBack, retry } = await placeAndPayOrder(client, product.id, 2);

    assert.equal(placed.status, 'pending');
    assert.equal(placed.customerId, user.id);
    assert.deepEqual(placed.total, { value: 2500, currency: 'EUR' });
    assert.deepEqual(
      placed.items.map((item) => [item.productId, item.qty]),
      [[product.id, 2]],
    );
    assert.equal(payment.status, 'succeeded');
    assert.equal(payment.orderId, placed.id);
    assert.deepEqual(payment.amount, { value: 2500, currency: 'EUR' });
    assert.equal(readBack.id, placed.id);
    assert.equal(readBack.status, 'paid');
    assert.deepEqual(retry, { payment, replayed: true });
    const { rows } = await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM payments WHERE order_id = $1', [placed.id]);
    assert.equal(rows[0]!.count, 1, 'the retry charged nothing');
  });

  test('a refusal comes back typed as the problem body, with the status', async () => {
    const { token } = await createCustomer(t);
    const client = createOrderpayClient({ serverUrl: `${SERVER_URL}/`, accessToken: token });
    const { data, error, response } = await client.GET('/orders/{orderId}', { params: { path: { orderId: 2_000_000_000 } } });
    assert.equal(data, undefined);
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(error?.code, 'ORDER_NOT_FOUND');
    assert.equal(error?.instance, `/v${API_VERSION}/orders/2000000000`);
  });

  test('the example runs as a process: ORDERPAY_URL and ORDERPAY_TOKEN', async () => {
    const { token } = await createCustomer(t);
    await createProduct(t.db, { price: 990, currency: 'EUR' });
    const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], {
      env: { ...process.env, ORDERPAY_URL: SERVER_URL, ORDERPAY_TOKEN: token },
      timeout: 60_000,
    });
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 3, stdout);
    assert.match(lines[0]!, /^order \d+: \d+ [A-Z]{3}, pending$/);
    assert.match(lines[1]!, /^payment (\d+): succeeded; the order is now paid$/);
    const paymentId = /^payment (\d+)/.exec(lines[1]!)![1];
    assert.equal(lines[2], `retry with the same key: payment ${paymentId}, replayed: true`);
  });
});
