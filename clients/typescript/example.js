// @ts-check
// The typed client at work, as a project that depends on it runs it: plain JavaScript on Node 20 or
// later, typed by the package's declarations. It places an order, pays it with an Idempotency-Key,
// reads it back, retries the payment as a client would after a lost answer (the stored payment is
// replayed), then walks the caller's orders page by page.
//   ORDERPAY_TOKEN=<access token> node clients/typescript/example.js
// with the server at ORDERPAY_URL (default http://127.0.0.1:3000); `npm start` prints tokens.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { createOrderpayClient, unwrap } from '@orderpay/client';

/**
 * @typedef {import('@orderpay/client').OrderpayClient} OrderpayClient
 * @typedef {import('@orderpay/client').components['schemas']['Order']} Order
 * @typedef {import('@orderpay/client').components['schemas']['Payment']} Payment
 * @typedef {object} PaidOrder
 * @property {Order} placed
 * @property {Payment} payment
 * @property {Order} readBack The order as read back after the payment: paid.
 * @property {{ payment: Payment, replayed: boolean }} retry The payment's retry with the same key: the stored response, marked Idempotent-Replayed.
 */

/**
 * A refused call throws an OrderpayProblem (unwrap), whose message names the status and the code.
 * @param {OrderpayClient} client
 * @param {number} productId
 * @returns {Promise<PaidOrder>}
 */
export async function placeAndPayOrder(client, productId, qty = 1) {
  const placed = unwrap(await client.POST('/orders', { body: { items: [{ productId, qty }] } }));

  // One key per payment, kept until it is known to have gone through: every retry sends it again.
  const idempotencyKey = randomUUID();
  const pay = () =>
    client.POST('/payments', {
      params: { header: { 'idempotency-key': idempotencyKey } },
      body: { amount: placed.total, orderId: placed.id },
    });
  const payment = unwrap(await pay());
  const readBack = unwrap(await client.GET('/orders/{orderId}', { params: { path: { orderId: placed.id } } }));

  const retried = await pay();
  return {
    placed,
    payment,
    readBack,
    retry: { payment: unwrap(retried), replayed: retried.response.headers.get('idempotent-replayed') === 'true' },
  };
}

/**
 * The caller's orders, every page, newest first: the pager sends each page's cursor for the next.
 * @param {OrderpayClient} client
 * @returns {Promise<Order[]>}
 */
export async function listAllOrders(client) {
  const orders = [];
  for await (const order of client.paginate('/orders', { params: { query: { sort: '-createdAt', pageSize: 10 } } })) orders.push(order);
  return orders;
}

/**
 * The first active product of the catalogue.
 * @param {OrderpayClient} client
 */
async function findProduct(client) {
  const products = unwrap(await client.GET('/products', { params: { query: { active: true, pageSize: 1 } } }));
  const product = products.data[0];
  if (!product) throw new Error('the catalogue has no active product: run `npm run orderpay -- seed`');
  return product.id;
}

async function main() {
  const accessToken = process.env.ORDERPAY_TOKEN;
  if (!accessToken) throw new Error('set ORDERPAY_TOKEN to an access token (npm start prints some)');
  const client = createOrderpayClient({ serverUrl: process.env.ORDERPAY_URL ?? 'http://127.0.0.1:3000', accessToken });
  const { placed, payment, readBack, retry } = await placeAndPayOrder(client, await findProduct(client));
  console.log(`order ${placed.id}: ${placed.total.value} ${placed.total.currency}, ${placed.status}`);
  console.log(`payment ${payment.id}: ${payment.status}; the order is now ${readBack.status}`);
  console.log(`retry with the same key: payment ${retry.payment.id}, replayed: ${retry.replayed}`);
  console.log(`your orders, all pages: ${(await listAllOrders(client)).length}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
