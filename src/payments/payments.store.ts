// Payments and refunds in SQL. Reads take the caller's scope: a customer's queries carry
// customer_id = $n, so another customer's payment is indistinguishable from a missing one.
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { OwnerScope } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import type { PaymentFilters, PaymentSortKey, PaymentStatus } from './payments.rules.ts';
import type { DeclineCode } from './processor.ts';

/** A payment as stored: amounts in minor units of currency; version counts its changes. */
export interface PaymentRecord {
  id: number;
  status: PaymentStatus;
  amount: number;
  currency: string;
  amountRefunded: number;
  orderId: number | null;
  customerId: number | null;
  declineCode: DeclineCode | null;
  createdAt: string;
  updatedAt: string;
  version: number;
  processorReference: string;
}

export interface RefundRecord {
  id: number;
  paymentId: number;
  amount: number;
  currency: string;
  createdAt: string;
}

const PAYMENT_COLUMNS = `id, status, amount, currency, amount_refunded AS "amountRefunded", order_id AS "orderId",
  customer_id AS "customerId", decline_code AS "declineCode", created_at AS "createdAt", updated_at AS "updatedAt",
  version, processor_reference AS "processorReference"`;

const REFUND_COLUMNS = `r.id, r.payment_id AS "paymentId", r.amount, p.currency, r.created_at AS "createdAt"`;

const ownerCondition = (scope: OwnerScope, params: unknown[]) => (scope ? ` AND customer_id = $${params.push(scope.customerId)}` : '');

export async function findPayment(db: Queryable, id: number, scope: OwnerScope): Promise<PaymentRecord | undefined> {
  const params: unknown[] = [id];
  const { rows } = await db.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1${ownerCondition(scope, params)}`,
    params,
  );
  return rows[0];
}

/** Locks the payment for a refund: concurrent refunds of it queue here, one at a time. */
export async function lockPayment(tx: Queryable, id: number, scope: OwnerScope): Promise<PaymentRecord | undefined> {
  const params: unknown[] = [id];
  const { rows } = await tx.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1${ownerCondition(scope, params)} FOR UPDATE`,
    params,
  );
  return rows[0];
}

/** The order's payment that took money (at most one: payments_order_settled_key), locked. */
export async function lockSettledPaymentOfOrder(tx: Queryable, orderId: number): Promise<PaymentRecord | undefined> {
  const { rows } = await tx.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE order_id = $1 AND status <> 'declined' FOR UPDATE`,
    [orderId],
  );
  return rows[0];
}

export interface NewPayment {
  customerId: number | null;
  clientId: string;
  orderId: number | null;
  amount: number;
  currency: string;
  status: PaymentStatus;
  declineCode: DeclineCode | null;
  processor: string;
  processorReference: string;
}

export async function insertPayment(tx: Queryable, payment: NewPayment): Promise<PaymentRecord> {
  const { rows } = await tx.query<PaymentRecord>(
    `INSERT INTO payments (customer_id, client_id, order_id, amount, currency, status, decline_code, processor, processor_reference)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${PAYMENT_COLUMNS}`,
    [
      payment.customerId,
      payment.clientId,
      payment.orderId,
      payment.amount,
      payment.currency,
      payment.status,
      payment.declineCode,
      payment.processor,
      payment.processorReference,
    ],
  );
  return rows[0]!;
}

/**
 * Records a refund and the payment's new balance and status, in the caller's transaction. The
 * balance is incremented in SQL, so the table's CHECK (amount_refunded <= amount) would refuse an
 * over-refund even if a caller skipped the row lock.
 */
export async function insertRefund(
  tx: Queryable,
  refund: { paymentId: number; amount: number; status: PaymentStatus; processorReference: string },
): Promise<{ refund: RefundRecord; payment: PaymentRecord }> {
  const { rows: payments } = await tx.query<PaymentRecord>(
    `UPDATE payments SET amount_refunded = amount_refunded + $2, status = $3, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
    [refund.paymentId, refund.amount, refund.status],
  );
  const { rows } = await tx.query<RefundRecord>(
    `WITH r AS (INSERT INTO refunds (payment_id, amount, processor_reference) VALUES ($1, $2, $3) RETURNING *)
     SELECT ${REFUND_COLUMNS} FROM r JOIN payments p ON p.id = r.payment_id`,
    [refund.paymentId, refund.amount, refund.processorReference],
  );
  return { refund: rows[0]!, payment: payments[0]! };
}

const SORT_COLUMNS: Record<PaymentSortKey, SortColumn> = {
  createdAt: { sql: 'created_at', type: 'timestamp' },
  id: { sql: 'id', type: 'integer' },
};

/** One page of payments and the exact total, in one statement (db/paging.ts). */
export function selectPaymentPage(
  db: Queryable,
  filters: PaymentFilters,
  plan: PagePlan<PaymentSortKey>,
): Promise<PageRows<PaymentRecord>> {
  const params: unknown[] = [];
  const conditions = ['true'];
  if (filters.customerId !== undefined) conditions.push(`customer_id = $${params.push(filters.customerId)}`);
  if (filters.status !== undefined) conditions.push(`status = $${params.push(filters.status)}`);
  if (filters.orderId !== undefined) conditions.push(`order_id = $${params.push(filters.orderId)}`);
  const where = conditions.join(' AND ');
  return selectPage<PaymentRecord, PaymentSortKey>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM payments WHERE ${where}`,
      rowsSql: `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE ${where}`,
      columns: SORT_COLUMNS,
      params,
    },
    plan,
  );
}

/** One page of a payment's refunds, oldest first, and their exact total, in one statement. */
export function selectRefunds(db: Queryable, paymentId: number, plan: PagePlan<'id'>): Promise<PageRows<RefundRecord>> {
  return selectPage<RefundRecord, 'id'>(
    db,
    {
      countSql: 'SELECT count(*) AS collection_total FROM refunds WHERE payment_id = $1',
      rowsSql: `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.payment_id = $1`,
      columns: { id: { sql: 'r.id', type: 'integer' } },
      params: [paymentId],
    },
    plan,
  );
}

export async function findRefund(db: Queryable, paymentId: number, refundId: number): Promise<RefundRecord | undefined> {
  const { rows } = await db.query<RefundRecord>(
    `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.payment_id = $1 AND r.id = $2`,
    [paymentId, refundId],
  );
  return rows[0];
}
