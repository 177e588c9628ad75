// Demo data: a staff user, customers (all with DEMO_PASSWORD), a demo public OAuth client,
// products and orders in every status. Orders reach their status the way real ones do: through
// the state machine, and paid ones through the payment flow with the simulated processor, so that
// every paid, shipped and delivered order has its succeeded payment. Runs once: a database that
// already has the demo staff user is left as it is.
import { actorOf } from './core/actor.ts';
import { createPublicClient } from './auth/clients.store.ts';
import { hashPassword } from './auth/passwords.ts';
import { LATEST_API_VERSION } from './core/api-versions.ts';
import type { Principal } from './core/principal.ts';
import { SCOPES } from './core/scopes.ts';
import type { Db, Queryable } from './db/db.ts';
import { beginPayment } from './flows/pay.ts';
import { advancePayment, type PaymentDriver } from './flows/settle-payment.ts';
import { changeStatus, decideStatusChange } from './orders/orders.service.ts';
import { insertOrder, insertOrderItems, lockOrder, type OrderRecord } from './orders/orders.store.ts';
import { ORDER_STATUSES, type OrderStatus } from './orders/orders.rules.ts';
import { createSimulatedProcessor } from './payments/simulator.ts';
import { insertProduct } from './products/products.store.ts';
import { findUserByEmail, insertUser, type User } from './users/users.store.ts';

export const DEMO_STAFF_EMAIL = 'staff@example.com';
/** Password of every demo user (development only: seeding never runs in production). */
export const DEMO_PASSWORD = 'orderpay-demo';
/**
 * A public client for trying the authorization code flow; its redirect URI is a loopback one.
 * Pinned to the latest API version: whoever tries orderpay sees the newest contract.
 */
export const DEMO_CLIENT_ID = 'orderpay-demo';
export const DEMO_REDIRECT_URI = 'http://127.0.0.1:8765/callback';
export const DEMO_CUSTOMER_EMAILS = ['alice@example.com', 'bob@example.com', 'carol@example.com'];

const PRODUCTS = [
  { name: 'Espresso beans, 1 kg', price: 2490, currency: 'EUR' },
  { name: 'Pour-over kettle', price: 5900, currency: 'EUR' },
  { name: 'Ceramic mug', price: 1200, currency: 'EUR' },
  { name: 'Burr grinder', price: 14900, currency: 'EUR' },
  { name: 'Paper filters (100)', price: 450, currency: 'EUR' },
  { name: 'Cold brew bottle', price: 2600, currency: 'USD' },
];

export interface SeedResult {
  seeded: boolean;
  users: number;
  products: number;
  orders: number;
}

/** The moves that take a new (pending) order to each status: the customer pays or cancels, staff ship. */
const MOVES_TO: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: [],
  paid: ['paid'],
  shipped: ['paid', 'shipped'],
  delivered: ['paid', 'shipped', 'delivered'],
  cancelled: ['cancelled'],
};

/** A demo user acting through the demo client, as a token from it would make them. */
const actingUser = (user: User): Principal => ({
  kind: 'user',
  userId: user.id,
  role: user.role,
  clientId: DEMO_CLIENT_ID,
  subject: String(user.id),
  scopes: new Set(SCOPES),
  apiVersion: LATEST_API_VERSION,
});

/**
 * The seed's one transaction as the Db the payment flow drives payments through: its phases run
 * inside it, one after the other (the simulator answers at once; nothing else sees the data yet).
 */
function seedDriver(tx: Queryable, db: Db): PaymentDriver {
  const within: Db = { ...db, query: (sql, params) => tx.query(sql, params), exec: (sql) => tx.exec(sql), transaction: (fn) => fn(tx) };
  return { db: within, processor: createSimulatedProcessor(), retryScheduleSeconds: [1], actionExpirySeconds: 3600 };
}

/** Moves the order to the status as its customer and staff would; paying goes through the payment flow and the simulator. */
async function bringOrderTo(
  tx: Queryable,
  driver: PaymentDriver,
  actors: { customer: Principal; staff: Principal },
  order: OrderRecord,
  status: OrderStatus,
): Promise<void> {
  let current = order;
  for (const move of MOVES_TO[status]) {
    if (move === 'paid') {
      const command = {
        amount: current.total,
        currency: current.currency,
        orderId: current.id,
        reference: `seed-order-${current.id}`,
        customerMayAct: false,
      };
      const begun = await beginPayment(tx, actors.customer, { processor: driver.processor, leaseSeconds: 30 }, command);
      const payment = await advancePayment(driver, begun.id);
      if (payment.status !== 'succeeded') throw new Error(`seeding: the payment of order ${current.id} was ${payment.status}`);
      current = (await lockOrder(tx, current.id, undefined))!;
    } else {
      const actor = move === 'cancelled' ? actors.customer : actors.staff;
      current = await changeStatus(tx, current, decideStatusChange(actor, current, move) ?? move, actorOf(actor));
    }
  }
}

export async function seedDemoData(db: Db): Promise<SeedResult> {
  return db.transaction(async (tx) => {
    if (await findUserByEmail(tx, DEMO_STAFF_EMAIL)) return { seeded: false, users: 0, products: 0, orders: 0 };
    const passwordHash = await hashPassword(DEMO_PASSWORD);
    const staff = await insertUser(tx, { email: DEMO_STAFF_EMAIL, name: 'Sam Staff', role: 'staff', passwordHash });
    const customers = [];
    for (const email of DEMO_CUSTOMER_EMAILS) {
      const name = email.split('@')[0]!;
      customers.push(await insertUser(tx, { email, name: name[0]!.toUpperCase() + name.slice(1), role: 'customer', passwordHash }));
    }
    await createPublicClient(
      tx,
      { name: 'orderpay demo app', redirectUris: [DEMO_REDIRECT_URI], apiVersion: LATEST_API_VERSION },
      DEMO_CLIENT_ID,
    );
    const products = [];
    for (const p of PRODUCTS) products.push(await insertProduct(tx, { ...p, active: true }));
    products.push(await insertProduct(tx, { name: 'Discontinued grinder', price: 9900, currency: 'EUR', active: false }));

    let orders = 0;
    const driver = seedDriver(tx, db);
    // Every customer gets an order in every status, with varied products and quantities.
    for (const [c, customer] of customers.entries()) {
      const actors = { customer: actingUser(customer), staff: actingUser(staff) };
      for (const [s, status] of ORDER_STATUSES.entries()) {
        const product = products[(c + s) % PRODUCTS.length]!;
        const qty = 1 + ((c * 5 + s) % 4);
        const order = await insertOrder(tx, { customerId: customer.id, total: product.price * qty, currency: product.currency });
        await insertOrderItems(tx, order, [{ productId: product.id, qty, unitPrice: product.price, lineTotal: product.price * qty }]);
        await bringOrderTo(tx, driver, actors, order, status);
        orders++;
      }
    }
    return { seeded: true, users: customers.length + 1, products: products.length, orders };
  });
}
