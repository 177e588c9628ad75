// Routes of payments and refunds: validate, check scope, respond through the idempotency layer.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { assertCurrency } from '../core/money.ts';
import { pageOf } from '../core/paging.ts';
import { pay } from '../flows/pay.ts';
import { requireScope } from '../http/authenticate.ts';
import { noneMatch } from '../http/etag.ts';
import { respondIdempotently } from '../http/idempotency.ts';
import { CACHE_NONE, resourceUrl, sendNotModified, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, IfNoneMatchHeaders, problems } from '../http/schemas.ts';
import { paymentEtag, paymentRepresentation, refundEtag, refundRepresentation } from './payments.representation.ts';
import {
  CreatePaymentBody,
  CreateRefundBody,
  ListPaymentsQuery,
  ListRefundsQuery,
  PaymentIdParams,
  RefundIdParams,
} from './payments.schemas.ts';
import { getPayment, getRefund, listPayments, listRefunds, refundPayment, requireRefunder } from './payments.service.ts';
import type { PaymentProcessor } from './processor.ts';

const PaymentRef = Type.Ref('Payment');
const RefundRef = Type.Ref('Refund');
const readSecurity = [{ bearer: ['payments:read'] }];
const writeSecurity = [{ bearer: ['payments:write'] }];
// Payment data is sensitive: no cache may keep it (the spec's caching rule 1).
const noStore = { cacheControl: CACHE_NONE };

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
          'Charges amount in currency through the payment processor. With orderId, pays that pending order (amount and currency must equal its total) and moves it to paid in the same transaction. A declined charge is stored too: check status. Idempotency-Key is required; a retry with the same key replays the stored response with Idempotent-Replayed: true.',
        body: CreatePaymentBody,
        response: { 201: PaymentRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415, 422, 503) },
      },
    },
    async function createPaymentRoute(request, reply) {
      const principal = requireScope(request, 'payments:write');
      const { amount, orderId } = request.body;
      assertCurrency(amount.currency, '/amount/currency');
      return respondIdempotently(request, reply, async (tx, reference) => {
        const payment = await pay(tx, app.paymentProcessor, principal, {
          amount: amount.value,
          currency: amount.currency,
          orderId,
          reference,
        });
        return {
          status: 201,
          body: paymentRepresentation(payment),
          headers: { etag: paymentEtag(payment, request.apiVersion), location: resourceUrl(request, `/payments/${payment.id}`) },
          afterCommit: () => app.businessMetrics.countPayment(payment),
        };
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
      const payments = await listPayments(app.db, principal, { ...request.query, page: pageOf(request.query, app.cursors) });
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
      const payment = await getPayment(app.db, principal, request.params.paymentId);
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
        security: writeSecurity,
        description:
          'Staff and service clients only. Gives back amount (omitted: all that is left); refunds never add up to more than the payment, however many run at once. Idempotency-Key is required.',
        params: PaymentIdParams,
        body: CreateRefundBody,
        response: { 201: RefundRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415, 422, 503) },
      },
    },
    async function refundPaymentRoute(request, reply) {
      // Scope and role before the key: a replay is never shown to a caller who may not refund now.
      requireRefunder(requireScope(request, 'payments:write'));
      const { paymentId } = request.params;
      return respondIdempotently(request, reply, async (tx, reference) => {
        const { amount } = request.body;
        const refund = await refundPayment(tx, app.paymentProcessor, {
          paymentId,
          amount: amount?.value,
          currency: amount?.currency,
          reference,
        });
        return {
          status: 201,
          body: refundRepresentation(refund),
          headers: {
            etag: refundEtag(refund, request.apiVersion),
            location: resourceUrl(request, `/payments/${paymentId}/refunds/${refund.id}`),
          },
          afterCommit: () => app.businessMetrics.countRefund('refund'),
        };
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
      const refunds = await listRefunds(app.db, principal, {
        paymentId: request.params.paymentId,
        page: pageOf(request.query, app.cursors),
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
      const refund = await getRefund(app.db, principal, request.params.paymentId, request.params.refundId);
      const etag = refundEtag(refund, request.apiVersion);
      if (noneMatch(request.headers['if-none-match'], etag)) return sendNotModified(reply, etag, CACHE_NONE);
      return sendRepresentation(request, reply, 200, refundRepresentation(refund), { etag, ...noStore });
    },
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    paymentProcessor: PaymentProcessor;
  }
}
