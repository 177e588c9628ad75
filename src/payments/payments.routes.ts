// Routes of payments and refunds: validate, check scope, respond through the idempotency layer, in
// phases: the payment or refund recorded (phase 1), then driven to an outcome the request's API
// version shows (src/flows/await-outcome.ts).
import { actorOf } from '../core/actor.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { DomainError } from '../core/errors.ts';
import { assertCurrency } from '../core/money.ts';
import { pageOf } from '../core/paging.ts';
import { awaitShownOutcome } from '../flows/await-outcome.ts';
import { beginPayment } from '../flows/pay.ts';
import { advancePayment, isProcessorUnavailable, type PaymentDriver } from '../flows/settle-payment.ts';
import { advanceRefund } from '../flows/settle-refund.ts';
import { REFUND_SCOPES } from '../core/scopes.ts';
import { requireAnyScope, requireScope } from '../http/authenticate.ts';
import { noneMatch } from '../http/etag.ts';
import { type Outcome, respondIdempotently } from '../http/idempotency.ts';
import { CACHE_NONE, resourceUrl, sendNotModified, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, IfNoneMatchHeaders, problems } from '../http/schemas.ts';
import { shownValues } from '../http/versions/versions.ts';
import { paymentEtag, paymentRepresentation, refundEtag, refundRepresentation } from './payments.representation.ts';
import {
  CreatePaymentBody,
  CreateRefundBody,
  ListPaymentsQuery,
  ListRefundsQuery,
  PaymentIdParams,
  RefundIdParams,
} from './payments.schemas.ts';
import type { PaymentStatus, RefundStatus } from './payments.rules.ts';
import {
  beginRefund,
  getPayment,
  getRefund,
  getRefundById,
  listPayments,
  listRefunds,
  type PaymentContext,
  requireRefunder,
  type ShownStatuses,
} from './payments.service.ts';
import type { PaymentRecord, RefundRecord } from './payments.store.ts';

const PaymentRef = Type.Ref('Payment');
const RefundRef = Type.Ref('Refund');
const readSecurity = [{ bearer: ['payments:read'] }];
const writeSecurity = [{ bearer: ['payments:write'] }];
// Alternatives, any one of which suffices (REFUND_SCOPES): payments:write first, as v1's frozen
// document has it, then payments:refund, an addition to it.
const refundSecurity = [{ bearer: ['payments:write'] }, { bearer: ['payments:refund'] }];
// Payment data is sensitive: no cache may keep it (the spec's caching rule 1).
const noStore = { cacheControl: CACHE_NONE };

/**
 * The statuses of payments and refunds the request's version shows (all of them from v3; before,
 * only decided ones): one in another is not there for the reader, and a request that made one
 * waits for its outcome (docs/payments.md, "Versions").
 */
function shownStatuses(request: FastifyRequest): ShownStatuses {
  return {
    payments: shownValues('Payment', 'status', request.apiVersion) as readonly PaymentStatus[] | undefined,
    refunds: shownValues('Refund', 'status', request.apiVersion) as readonly RefundStatus[] | undefined,
  };
}

const isShown = (statuses: readonly string[] | undefined, status: string): boolean => statuses?.includes(status) ?? true;

/** 503 while the processor has not decided and the request's version shows only decisions. */
function paymentInProgress(): DomainError {
  return new DomainError(
    'PAYMENT_IN_PROGRESS',
    'The payment processor has not decided yet. Retry the request with the same Idempotency-Key to receive the outcome.',
  );
}

/** A refund the processor could not make, in a version whose refunds have no status. */
function refundFailed(refund: RefundRecord): DomainError {
  return new DomainError('PAYMENT_REFUND_FAILED', `The processor could not make the refund: ${refund.failureReason}.`, {
    extensions: { failureReason: refund.failureReason },
  });
}

export async function paymentsRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/payments',
    {
      config: { idempotency: 'required', rateLimitBudget: 'payments' },
      schema: {
        tags: ['payments'],
        operationId: 'createPayment',
        summary: 'Make a payment',
        security: writeSecurity,
        description:
          'Charges amount in currency through the payment processor. With orderId, pays that pending order (amount and currency must equal its total) and moves it to paid once the processor took the money. A declined charge is stored too: check status. Idempotency-Key is required; a retry with the same key replays the stored response with Idempotent-Replayed: true, or goes on with a payment whose outcome was not known yet. See docs/payments.md.',
        body: CreatePaymentBody,
        response: { 201: PaymentRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415, 422, 503) },
      },
    },
    async function createPaymentRoute(request, reply) {
      const principal = requireScope(request, 'payments:write');
      const { amount, orderId } = request.body;
      assertCurrency(amount.currency, '/amount/currency');
      const shown = shownStatuses(request).payments;
      const outcomeOf = (payment: PaymentRecord): Outcome => ({
        status: 201,
        body: paymentRepresentation(payment),
        headers: { etag: paymentEtag(payment, request.apiVersion), location: resourceUrl(request, `/payments/${payment.id}`) },
      });
      // What this request's phase 1 committed, when it ran here (a retry resumes from the id alone).
      let recorded: PaymentRecord | undefined;
      return respondIdempotently(request, reply, {
        begin: async (tx, reference) => {
          const { paymentMethod, returnUrl } = request.body;
          const customerMayAct = isShown(shown, 'requires_action');
          const command = { amount: amount.value, currency: amount.currency, orderId, reference, paymentMethod, returnUrl, customerMayAct };
          recorded = await beginPayment(tx, principal, app.paymentContext, command);
          return { recoveryPoint: recorded.id };
        },
        resume: async (paymentId, _reference, complete) => {
          const driver = app.paymentDriver;
          const reread = () => getPayment(driver.db, principal, paymentId);
          const payment = await awaitShownOutcome(
            async (within) => {
              try {
                return await advancePayment(driver, recorded ?? paymentId, within);
              } catch (error) {
                // A version that shows a payment in progress answers with it: the completer goes on.
                if (isShown(shown, 'processing') && isProcessorUnavailable(error)) return reread();
                throw error;
              }
            },
            reread,
            {
              db: driver.db,
              shows: (p) => isShown(shown, p.status),
              waitMs: app.config.payments.waitMs,
              complete: (tx, p) => complete(tx, outcomeOf(p)),
            },
          );
          if (!payment) throw paymentInProgress();
          return outcomeOf(payment);
        },
      });
    },
  );

  app.get(
    '/payments',
    {
      schema: {
        tags: ['payments'],
        operationId: 'listPayments',
        summary: 'List payments',
        security: readSecurity,
        description:
          'Customers see their own payments; staff and service clients see all. Filters combine; every unknown parameter is a 400.',
        querystring: ListPaymentsQuery,
        response: { 200: Envelope(PaymentRef, 'A page of payments.'), ...problems(400, 401, 403, 406) },
      },
    },
    async function listPaymentsRoute(request, reply) {
      const principal = requireScope(request, 'payments:read');
      const payments = await listPayments(await app.collectionReader(request), principal, {
        ...request.query,
        page: pageOf(request.query, app.cursors),
        shown: shownStatuses(request),
      });
      return sendPage(request, reply, payments, paymentRepresentation, noStore);
    },
  );

  app.get(
    '/payments/:paymentId',
    {
      schema: {
        tags: ['payments'],
        operationId: 'getPayment',
        summary: 'Get a payment',
        security: readSecurity,
        description: "The payment's owner, staff and service clients may read it; to anyone else it does not exist (404).",
        params: PaymentIdParams,
        headers: IfNoneMatchHeaders,
        response: { 200: PaymentRef, 304: Type.Null({ description: 'Not modified.' }), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getPaymentRoute(request, reply) {
      const principal = requireScope(request, 'payments:read');
      const payment = await getPayment(app.db, principal, request.params.paymentId, shownStatuses(request));
      const etag = paymentEtag(payment, request.apiVersion);
      if (noneMatch(request.headers['if-none-match'], etag)) return sendNotModified(reply, etag, CACHE_NONE);
      return sendRepresentation(request, reply, 200, paymentRepresentation(payment), { etag, ...noStore });
    },
  );

  app.post(
    '/payments/:paymentId/refunds',
    {
      config: { idempotency: 'required', rateLimitBudget: 'payments' },
      schema: {
        tags: ['payments'],
        operationId: 'createRefund',
        summary: 'Refund a payment',
        security: refundSecurity,
        description:
          'Staff and service clients only, with the scope payments:refund (or payments:write, which refunded before payments:refund existed). Gives back amount (omitted: all that is left); refunds never add up to more than the payment, however many run at once. Idempotency-Key is required.',
        params: PaymentIdParams,
        body: CreateRefundBody,
        response: { 201: RefundRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415, 422, 503) },
      },
    },
    async function refundPaymentRoute(request, reply) {
      // Scope and role before the key: a replay is never shown to a caller who may not refund now.
      const principal = requireAnyScope(request, REFUND_SCOPES);
      requireRefunder(principal);
      const { paymentId } = request.params;
      const { amount } = request.body;
      const shown = shownStatuses(request).refunds;
      const outcomeOf = (refund: RefundRecord): Outcome =>
        refund.status === 'failed' && !isShown(shown, refund.status)
          ? { problem: refundFailed(refund) }
          : {
              status: 201,
              body: refundRepresentation(refund),
              headers: {
                etag: refundEtag(refund, request.apiVersion),
                location: resourceUrl(request, `/payments/${paymentId}/refunds/${refund.id}`),
              },
            };
      return respondIdempotently(request, reply, {
        begin: async (tx, reference) => {
          const refund = await beginRefund(
            tx,
            { paymentId, amount: amount?.value, currency: amount?.currency, reference, requestedBy: actorOf(principal) },
            app.paymentContext.leaseSeconds,
          );
          return { recoveryPoint: refund.id };
        },
        resume: async (refundId, _reference, complete) => {
          const driver = app.paymentDriver;
          const refund = await awaitShownOutcome(
            (within) => advanceRefund(driver, refundId, within),
            () => getRefundById(driver.db, refundId),
            {
              db: driver.db,
              // A failed refund is final: answered as a problem where it is not shown.
              shows: (r) => isShown(shown, r.status) || r.status === 'failed',
              waitMs: app.config.payments.waitMs,
              complete: (tx, r) => complete(tx, outcomeOf(r)),
            },
          );
          if (!refund) throw paymentInProgress();
          return outcomeOf(refund);
        },
      });
    },
  );

  app.get(
    '/payments/:paymentId/refunds',
    {
      schema: {
        tags: ['payments'],
        operationId: 'listRefunds',
        summary: "List a payment's refunds",
        description: 'Oldest first. Scope payments:read; a customer sees only the refunds of their own payments (404 otherwise).',
        security: readSecurity,
        params: PaymentIdParams,
        querystring: ListRefundsQuery,
        response: { 200: Envelope(RefundRef, 'A page of refunds, oldest first.'), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function listRefundsRoute(request, reply) {
      const principal = requireScope(request, 'payments:read');
      const refunds = await listRefunds(await app.collectionReader(request), principal, {
        paymentId: request.params.paymentId,
        page: pageOf(request.query, app.cursors),
        shown: shownStatuses(request),
      });
      return sendPage(request, reply, refunds, refundRepresentation, noStore);
    },
  );

  app.get(
    '/payments/:paymentId/refunds/:refundId',
    {
      schema: {
        tags: ['payments'],
        operationId: 'getRefund',
        summary: 'Get a refund',
        security: readSecurity,
        description: 'Carries a strong ETag (a refund never changes); with a matching If-None-Match the answer is 304 without a body.',
        params: RefundIdParams,
        headers: IfNoneMatchHeaders,
        response: { 200: RefundRef, 304: Type.Null({ description: 'Not modified.' }), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getRefundRoute(request, reply) {
      const principal = requireScope(request, 'payments:read');
      const refund = await getRefund(app.db, principal, request.params.paymentId, request.params.refundId, shownStatuses(request));
      const etag = refundEtag(refund, request.apiVersion);
      if (noneMatch(request.headers['if-none-match'], etag)) return sendNotModified(reply, etag, CACHE_NONE);
      return sendRepresentation(request, reply, 200, refundRepresentation(refund), { etag, ...noStore });
    },
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The processor and its schedule, for phases 2 and 3 (src/flows/settle-payment.ts). */
    paymentDriver: PaymentDriver;
    /** Which processor phase 1 records, and how long a request has before the completer may take over. */
    paymentContext: PaymentContext;
  }
}
