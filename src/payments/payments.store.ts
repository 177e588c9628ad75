// Payments and refunds in SQL. Reads take the caller's scope: a customer's queries carry
// customer_id = $n, so another customer's payment is indistinguishable from a missing one.
import type { Actor } from '../core/actor.ts';
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { OwnerScope } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import type { CancellationReason, PaymentFilters, PaymentSortKey, PaymentStatus, RefundStatus } from './payments.rules.ts';
import type { NextAction } from './processor.ts';

/** A payment as stored: amounts in minor units of currency; version counts its changes. */
export interface PaymentRecord {
  id: number;
  status: PaymentStatus;
  amount: number;
  currency: string;
  amountRefunded: number;
  orderId: number | null;
  customerId: number | null;
  /** The processor's code for a decline (v1 and v2 show the ones they know). */
  declineCode: string | null;
  cancellationReason: CancellationReason | null;
  nextAction: NextAction | null;
  actionExpiresAt: string | null;
  paymentMethod: string | null;
  returnUrl: string | null;
  livemode: boolean;
  createdAt: string;
  updatedAt: string;
  version: number;
  /** Our name for the charge: the processor's idempotency key. */
  reference: string;
  processor: string;
  /** The processor's id of the charge; null until it named it. */
  processorReference: string | null;
  /** Calls in a row that found the processor unavailable. */
  attempts: number;
  needsAttentionSince: string | null;
  attentionReason: string | null;
  /** Who asked for the payment: its outcome's event names them. Null for payments made before it was kept. */
  requestedBy: Actor | null;
}

export interface RefundRecord {
  id: number;
  paymentId: number;
  status: RefundStatus;
  amount: number;
  currency: string;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
  reference: string;
  processorReference: string | null;
  /** The charge refunded (the payment's processor reference). */
  chargeReference: string;
  attempts: number;
  needsAttentionSince: string | null;
  attentionReason: string | null;
  /** Who asked for the refund: its outcome's event names them. Null for refunds made before it was kept. */
  requestedBy: Actor | null;
}

const PAYMENT_COLUMNS = `id, status, amount, currency, amount_refunded AS "amountRefunded", order_id AS "orderId",
  customer_id AS "customerId", decline_code AS "declineCode", cancellation_reason AS "cancellationReason",
  next_action AS "nextAction", action_expires_at AS "actionExpiresAt", payment_method AS "paymentMethod",
  return_url AS "returnUrl", livemode, created_at AS "createdAt", updated_at AS "updatedAt", version, reference, processor,
  processor_reference AS "processorReference", attempts, needs_attention_since AS "needsAttentionSince",
  attention_reason AS "attentionReason", requested_by AS "requestedBy"`;

const REFUND_COLUMNS = `r.id, r.payment_id AS "paymentId", r.status, r.amount, p.currency, r.failure_reason AS "failureReason",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt", r.reference, r.processor_reference AS "processorReference",
  p.processor_reference AS "chargeReference", r.attempts, r.needs_attention_since AS "needsAttentionSince",
  r.attention_reason AS "attentionReason", r.requested_by AS "requestedBy"`;

const ownerCondition = (scope: OwnerScope, params: unknown[]) => (scope ? ` AND customer_id = $${params.push(scope.customerId)}` : '');

/** Statuses the reader's API version shows: a payment in another is not there for it (docs/payments.md). */
const statusCondition = (statuses: readonly string[] | undefined, params: unknown[], column = 'status') =>
  statuses ? ` AND ${column} = ANY($${params.push(statuses)}::text[])` : '';

export async function findPayment(
  db: Queryable,
  id: number,
  scope: OwnerScope,
  statuses?: readonly PaymentStatus[],
): Promise<PaymentRecord | undefined> {
  const params: unknown[] = [id];
  const { rows } = await db.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1${ownerCondition(scope, params)}${statusCondition(statuses, params)}`,
    params,
  );
  return rows[0];
}

/** The payment whose charge the processor knows by processorReference (its events name it so). */
export async function findPaymentByProcessorReference(
  db: Queryable,
  processor: string,
  processorReference: string,
): Promise<PaymentRecord | undefined> {
  const { rows } = await db.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE processor = $1 AND processor_reference = $2`,
    [processor, processorReference],
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

/**
 * The order's payment that took money or may still (at most one: payments_order_reserved_key),
 * locked: the one in progress, or the one that succeeded.
 */
export async function lockReservingPaymentOfOrder(tx: Queryable, orderId: number): Promise<PaymentRecord | undefined> {
  const { rows } = await tx.query<PaymentRecord>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE order_id = $1 AND status NOT IN ('declined', 'canceled') FOR UPDATE`,
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
  reference: string;
  processor: string;
  livemode: boolean;
  paymentMethod: string | null;
  returnUrl: string | null;
  /** How long the request that records it has, before the completer may drive it instead. */
  leaseSeconds: number;
  requestedBy: Actor;
}

/**
 * Phase 1: the payment as processing, due to the completer only if its request does not finish it.
 * It is version 0 until its first outcome, version 1: a version that shows only outcomes tags a
 * payment from 1, as it tags every other resource.
 */
export async function insertPayment(tx: Queryable, payment: NewPayment): Promise<PaymentRecord> {
  const { rows } = await tx.query<PaymentRecord>(
    `INSERT INTO payments (customer_id, client_id, order_id, amount, currency, status, reference, processor, livemode,
                           payment_method, return_url, next_attempt_at, version, requested_by)
     VALUES ($1, $2, $3, $4, $5, 'processing', $6, $7, $8, $9, $10, now() + make_interval(secs => $11), 0, $12::jsonb)
     RETURNING ${PAYMENT_COLUMNS}`,
    [
      payment.customerId,
      payment.clientId,
      payment.orderId,
      payment.amount,
      payment.currency,
      payment.reference,
      payment.processor,
      payment.livemode,
      payment.paymentMethod,
      payment.returnUrl,
      payment.leaseSeconds,
      JSON.stringify(payment.requestedBy),
    ],
  );
  return rows[0]!;
}

/** The fields an outcome sets, beyond the status. */
export interface PaymentChange {
  status: PaymentStatus;
  declineCode?: string;
  cancellationReason?: CancellationReason;
  nextAction?: NextAction;
  /** requires_action: until when the customer may act. */
  actionExpiresInSeconds?: number;
  /** When the completer next asks the processor (requires_action: whether the customer acted). */
  nextAttemptInSeconds?: number;
}

/**
 * Phase 3: the payment moves from `from` (a status in progress) to the outcome, in the caller's
 * transaction. Only one of several drivers that learned the outcome (the request, the completer,
 * the processor's event) changes it: the others get undefined and read what the first committed.
 */
export async function changePaymentStatus(
  tx: Queryable,
  id: number,
  from: PaymentStatus,
  change: PaymentChange,
): Promise<PaymentRecord | undefined> {
  const { rows } = await tx.query<PaymentRecord>(
    `UPDATE payments SET status = $3, decline_code = $4, cancellation_reason = $5, next_action = $6::jsonb,
            action_expires_at = CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END,
            next_attempt_at = CASE WHEN $8::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $8::integer) END,
            attempts = 0, version = version + 1, updated_at = now()
      WHERE id = $1 AND status = $2 RETURNING ${PAYMENT_COLUMNS}`,
    [
      id,
      from,
      change.status,
      change.declineCode ?? null,
      change.cancellationReason ?? null,
      change.nextAction ? JSON.stringify(change.nextAction) : null,
      change.actionExpiresInSeconds ?? null,
      change.nextAttemptInSeconds ?? null,
    ],
  );
  return rows[0];
}

/** Phase 1 of a refund: recorded as pending, its amount counted against the payment's balance at once. */
export async function insertRefund(
  tx: Queryable,
  refund: { paymentId: number; amount: number; paymentStatus: PaymentStatus; reference: string; leaseSeconds: number; requestedBy: Actor },
): Promise<{ refund: RefundRecord; payment: PaymentRecord }> {
  const { rows: payments } = await tx.query<PaymentRecord>(
    `UPDATE payments SET amount_refunded = amount_refunded + $2, status = $3, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
    [refund.paymentId, refund.amount, refund.paymentStatus],
  );
  const { rows } = await tx.query<RefundRecord>(
    `WITH r AS (INSERT INTO refunds (payment_id, amount, status, reference, next_attempt_at, requested_by)
                VALUES ($1, $2, 'pending', $3, now() + make_interval(secs => $4), $5::jsonb) RETURNING *)
     SELECT ${REFUND_COLUMNS} FROM r JOIN payments p ON p.id = r.payment_id`,
    [refund.paymentId, refund.amount, refund.reference, refund.leaseSeconds, JSON.stringify(refund.requestedBy)],
  );
  return { refund: rows[0]!, payment: payments[0]! };
}

/** Phase 3 of a refund: pending → succeeded or failed (its amount given back), once, in the caller's transaction. */
export async function changeRefundStatus(
  tx: Queryable,
  id: number,
  change: { status: 'succeeded' | 'failed'; processorReference: string; failureReason?: string },
): Promise<RefundRecord | undefined> {
  const { rows } = await tx.query<RefundRecord>(
    `WITH r AS (UPDATE refunds SET status = $2, processor_reference = $3, failure_reason = $4, next_attempt_at = NULL,
                       attempts = 0, updated_at = now()
                 WHERE id = $1 AND status = 'pending' RETURNING *)
     SELECT ${REFUND_COLUMNS} FROM r JOIN payments p ON p.id = r.payment_id`,
    [id, change.status, change.processorReference, change.failureReason ?? null],
  );
  return rows[0];
}

/** A failed refund gives its amount back to the payment's balance, and the status that balance means. */
export async function restoreRefundedAmount(tx: Queryable, paymentId: number, amount: number): Promise<PaymentRecord> {
  const { rows } = await tx.query<PaymentRecord>(
    `UPDATE payments SET amount_refunded = amount_refunded - $2,
            status = CASE WHEN amount_refunded - $2 = 0 THEN 'succeeded' ELSE 'partially_refunded' END,
            version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
    [paymentId, amount],
  );
  return rows[0]!;
}

/** The refund the processor knows by processorReference, of a payment through that processor. */
export async function findRefundByProcessorReference(
  db: Queryable,
  processor: string,
  processorReference: string,
): Promise<RefundRecord | undefined> {
  const { rows } = await db.query<RefundRecord>(
    `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.processor_reference = $2 AND p.processor = $1`,
    [processor, processorReference],
  );
  return rows[0];
}

export async function findRefundById(db: Queryable, id: number): Promise<RefundRecord | undefined> {
  const { rows } = await db.query<RefundRecord>(
    `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1`,
    [id],
  );
  return rows[0];
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
  if (filters.needsAttention !== undefined) conditions.push(`needs_attention_since IS ${filters.needsAttention ? 'NOT ' : ''}NULL`);
  const where = conditions.join(' AND ') + statusCondition(filters.shownStatuses, params);
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

/** One page of a payment's refunds (in the statuses shown), oldest first, and their exact total, in one statement. */
export function selectRefunds(
  db: Queryable,
  paymentId: number,
  shownStatuses: readonly RefundStatus[] | undefined,
  plan: PagePlan<'id'>,
): Promise<PageRows<RefundRecord>> {
  const params: unknown[] = [paymentId];
  const shown = statusCondition(shownStatuses, params, 'r.status');
  return selectPage<RefundRecord, 'id'>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM refunds r WHERE r.payment_id = $1${shown}`,
      rowsSql: `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.payment_id = $1${shown}`,
      columns: { id: { sql: 'r.id', type: 'integer' } },
      params,
    },
    plan,
  );
}

export async function findRefund(
  db: Queryable,
  paymentId: number,
  refundId: number,
  shownStatuses?: readonly RefundStatus[],
): Promise<RefundRecord | undefined> {
  const params: unknown[] = [paymentId, refundId];
  const { rows } = await db.query<RefundRecord>(
    `SELECT ${REFUND_COLUMNS} FROM refunds r JOIN payments p ON p.id = r.payment_id
      WHERE r.payment_id = $1 AND r.id = $2${statusCondition(shownStatuses, params, 'r.status')}`,
    params,
  );
  return rows[0];
}
