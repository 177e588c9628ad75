// The typed client at work: place an order, pay it with an Idempotency-Key, read it back, and
// retry the payment as a client would after a lost answer (the stored payment is replayed).
//   ORDERPAY_TOKEN=<access token> node clients/typescript/example.ts
// with the server at ORDERPAY_URL (default http://127.0.0.1:3000); `npm start` prints tokens.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { type components, createOrderpayClient, type OrderpayClient } from './client.ts';

type Order = components['schemas']['Order'];
type Payment = components['schemas']['Payment'];
type Problem = components['schemas']['Problem'];

export interface PaidOrder {
  placed: Order;
  payment: Payment;
  /** The order as read back after the payment: paid. */
  readBack: Order;
  /** The payment's retry with the same key: the stored response, marked Idempotent-Replayed. */
  retry: { payment: Payment; replayed: boolean };
}

function fail(step: string, response: Response, problem: Problem | undefined): never {
  throw new Error(`${step}: ${response.status} ${problem?.code ?? ''} ${problem?.detail ?? ''}`.trim());
}

export async function placeAndPayOrder(client: OrderpayClient, productId: number, qty = 1): Promise<PaidOrder> {
  const placed = await client.POST('/orders', { body: { items: [{ productId, qty }] } });
  if (!placed.data) fail('placing the order', placed.response, placed.error);

  // One key per payment, kept until it is known to have gone through: every retry sends it again.
  const idempotencyKey = randomUUID();
  const pay = () =>
    client.POST('/payments', {
      params: { header: { 'idempotency-key': idempotencyKey } },
      body: { amount: placed.data.total, orderId: placed.data.id },
    });
  const paid = await pay();
  if (!paid.data) fail('paying the order', paid.response, paid.error);

  const readBack = await client.GET('/orders/{orderId}', { params: { path: { orderId: placed.data.id } } });
  if (!readBack.data) fail('reading the order back', readBack.response, readBack.error);

  const retried = await pay();
  if (!retried.data) fail('retrying the payment', retried.response, retried.error);
  return {
    placed: placed.data,
    payment: paid.data,
    readBack: readBack.data,
    retry: { payment: retried.data, replayed: retried.response.headers.get('idempotent-replayed') === 'true' },
  };
}

/** The first active product of the catalogue. */
async function findProduct(client: OrderpayClient): Promise<number> {
  const products = await client.GET('/products', { params: { query: { active: true, pageSize: 1 } } });
  if (!products.data) fail('listing products', products.response, products.error);
  const product = products.data.data[0];
  if (!product) throw new Error('the catalogue has no active product: run `npm run orderpay -- seed`');
  return product.id;
}

async function main(): Promise<void> {
  const accessToken = process.env.ORDERPAY_TOKEN;
  if (!accessToken) throw new Error('set ORDERPAY_TOKEN to an access token (npm start prints some)');
  const client = createOrderpayClient({ serverUrl: process.env.ORDERPAY_URL ?? 'http://127.0.0.1:3000', accessToken });
  const { placed, payment, readBack, retry } = await placeAndPayOrder(client, await findProduct(client));
  console.log(`order ${placed.id}: ${placed.total.value} ${placed.total.currency}, ${placed.status}`);
  console.log(`payment ${payment.id}: ${payment.status}; the order is now ${readBack.status}`);
  console.log(`retry with the same key: payment ${retry.payment.id}, replayed: ${retry.replayed}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
