// The system under fault: a database on the suite's own cluster, owned by an unprivileged role as
// in production, holding one customer, a few products and pending orders to pay; and `orderpay
// serve` processes on fixed ports (test/cli/orderpay-process.ts starts them), which a scenario
// kills, stops and restarts on the same port while its clients keep sending.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { migrate } from '../../src/db/migrate.ts';
import {
  commandEnv,
  parseJsonOutput,
  runOrderpay,
  startServe,
  withTargetDatabase,
  type Env,
  type Exit,
  type ServeProcess,
  type TargetDatabase,
} from '../cli/orderpay-process.ts';
import { createOrder, createProduct, createUser } from '../helpers/factories.ts';
import { LOCK_SECONDS } from './bounds.ts';
import { adminQuery, type PostgresCluster } from './postgres-cluster.ts';

/** The ports of this suite's orderpay processes: 29700–29799. */
export const PORTS = { first: 29700, second: 29701, third: 29702, webhookReceiver: 29703 } as const;

const APP_ROLE = 'orderpay';
const APP_DATABASE = 'orderpay';
const ORDER_PRICE_CENTS = [1250, 4200, 990];

export interface PendingOrder {
  id: number;
  total: number;
}

export interface World {
  cluster: PostgresCluster;
  /** The database as test/cli/orderpay-process.ts reads it: env carries DATABASE_URL (orderpay's role). */
  target: TargetDatabase;
  /** The same database as the superuser, who may connect when orderpay's role has no slot left. */
  inspection: TargetDatabase;
  customerId: number;
  /** Bearer token of the customer: orders and payments, read and write. */
  token: string;
  productIds: number[];
  /** Pending orders made before the load, each paid by at most one logical payment of it. */
  pendingOrders: PendingOrder[];
}

/**
 * Creates a database (and orderpay's role, once), migrates it, creates the customer, products and
 * pending orders, issues a token. Each test that keeps a ledger of its own needs a world of its own.
 */
export async function prepareWorld(cluster: PostgresCluster, options: { pendingOrders: number; database?: string }): Promise<World> {
  const database = options.database ?? APP_DATABASE;
  await adminQuery(cluster, [
    `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${APP_ROLE}') THEN CREATE ROLE ${APP_ROLE} LOGIN; END IF; END $$`,
    `CREATE DATABASE ${database} OWNER ${APP_ROLE}`,
  ]);
  const target: TargetDatabase = {
    kind: 'postgres',
    env: { DATABASE_URL: cluster.url(APP_ROLE, database), NODE_ENV: 'production', ORDERPAY_PAYMENT_PROCESSOR: 'simulator' },
    dataDir: undefined,
    drop: async () => {},
  };
  const inspection: TargetDatabase = { ...target, env: { DATABASE_URL: cluster.adminUrl(database) } };
  const seeded = await withTargetDatabase(target, async (db) => {
    await migrate(db);
    const customer = await createUser(db);
    const products = [];
    for (const price of ORDER_PRICE_CENTS) products.push(await createProduct(db, { price, currency: 'EUR' }));
    const orders: PendingOrder[] = [];
    for (let i = 0; i < options.pendingOrders; i++) {
      const product = products[i % products.length]!;
      const order = await createOrder(db, customer.id, { productId: product.id, price: product.price, currency: 'EUR' });
      orders.push({ id: order.id, total: order.total });
    }
    return { customer, productIds: products.map((p) => p.id), orders };
  });
  const issued = await runOrderpay(
    [
      'tokens',
      'issue',
      '--email',
      seeded.customer.email,
      '--scope',
      'orders:read orders:write payments:read payments:write',
      '--expires-in',
      '3600',
      '--json',
    ],
    commandEnv(target.env),
  );
  assert.equal(issued.code, 0, issued.stderr);
  return {
    cluster,
    target,
    inspection,
    customerId: seeded.customer.id,
    token: parseJsonOutput(issued.stdout).access_token as string,
    productIds: seeded.productIds,
    pendingOrders: seeded.orders,
  };
}

/**
 * One orderpay process on a fixed port that a scenario can stop, kill and start again: clients
 * keep its URL across restarts, as they would a host name.
 */
export interface OrderpaySlot {
  port: number;
  url: string;
  readonly running: boolean;
  /** The pid of the running process. */
  readonly pid: number | undefined;
  /** How many starts failed (the database was down then) before one listened. */
  readonly failedStarts: number;
  /** Starts the process, retrying as a supervisor would when it exits before listening; a running one is kept. */
  start(): Promise<ServeProcess>;
  /** SIGKILL: no drain, no ROLLBACK, no response, as if the machine lost power. */
  kill(): Promise<Exit>;
  /** SIGTERM and the exit, waited for up to timeoutMs (killed past it): the exit and how long it took. */
  terminate(timeoutMs: number): Promise<{ exit: Exit; ms: number }>;
  /** What every process of this slot wrote (its JSON log lines, errors): failure messages and evidence of a fault. */
  output(): string;
}

const LIMIT_NEVER_REACHED = 1_000_000_000;

export function createSlot(world: World, port: number, extraEnv: Env = {}, startAttempts = 10): OrderpaySlot {
  const env = commandEnv({
    ...world.target.env,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ORDERPAY_IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
    // The clients' load is the fault suite's, not an abuser's: the limits stay on (counted, and
    // payments paused while they cannot be) but never refuse it.
    ORDERPAY_RATE_LIMIT_READS: String(LIMIT_NEVER_REACHED),
    ORDERPAY_RATE_LIMIT_WRITES: String(LIMIT_NEVER_REACHED),
    ORDERPAY_RATE_LIMIT_PAYMENTS: String(LIMIT_NEVER_REACHED),
    ...extraEnv,
  });
  let serving: ServeProcess | undefined;
  let starting: Promise<ServeProcess> | undefined;
  let pastOutput = '';
  let failedStarts = 0;

  const current = (): ServeProcess => {
    if (!serving) throw new Error(`no orderpay process on port ${port}`);
    return serving;
  };
  const retire = (ended: ServeProcess) => {
    pastOutput += ended.stdout() + ended.stderr();
    if (serving === ended) serving = undefined;
  };

  async function startWithRetries(): Promise<ServeProcess> {
    for (let attempt = 1; ; attempt++) {
      try {
        serving = await startServe(env, 30_000);
        return serving;
      } catch (error) {
        // Exited before listening: its database was restarting. A supervisor starts it again.
        failedStarts++;
        pastOutput += `${(error as Error).message}\n`;
        if (attempt >= startAttempts) throw error;
        await sleep(500);
      }
    }
  }

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get running() {
      return serving !== undefined && serving.child.exitCode === null && serving.child.signalCode === null;
    },
    get pid() {
      return serving?.child.pid;
    },
    get failedStarts() {
      return failedStarts;
    },
    start() {
      if (this.running && serving) return Promise.resolve(serving);
      starting ??= startWithRetries().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    async kill() {
      const killed = current();
      killed.child.kill('SIGKILL');
      const exit = await killed.waitForExit(10_000);
      retire(killed);
      return exit;
    },
    async terminate(timeoutMs) {
      const stopping = current();
      const started = performance.now();
      // Past the deadline stop() kills it and rejects: report the exit seen, the caller asserts.
      const exit = await stopping.stop('SIGTERM', timeoutMs).catch(() => stopping.closed);
      const ms = performance.now() - started;
      retire(stopping);
      return { exit, ms };
    },
    output: () => pastOutput + (serving ? serving.stdout() + serving.stderr() : ''),
  };
}
