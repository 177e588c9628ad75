// Routes of orders, a user's orders and order items: validate, check scope, call the service or
// flow, answer with the representation.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { pageOf } from '../core/paging.ts';
import { changeOrderStatus } from '../flows/change-order-status.ts';
import { deleteOrder } from '../flows/delete-order.ts';
import { listUserOrders } from '../flows/list-user-orders.ts';
import { placeOrder } from '../flows/place-order.ts';
import { REFUND_SCOPES } from '../core/scopes.ts';
import { requireAnyScope, requireScope } from '../http/authenticate.ts';
import { noneMatch } from '../http/etag.ts';
import { respondIdempotently } from '../http/idempotency.ts';
import { ACCEPT_PATCH, MERGE_PATCH_MEDIA_TYPE, requireMergePatch } from '../http/merge-patch.ts';
import { resourceUrl, sendNotModified, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, IfMatchHeaders, IfNoneMatchHeaders, problems } from '../http/schemas.ts';
import { representAtVersion, sentBody } from '../http/version-routes.ts';
import { showsField } from '../http/versions/versions.ts';
import type { Queryable } from '../db/db.ts';
import {
  orderEtag,
  orderIfMatch,
  assertRemovesNoMember,
  orderItemRepresentation,
  orderPatchPrecondition,
  orderReplacementPrecondition,
  orderRepresentation,
} from './orders.representation.ts';
import {
  CreateOrderBody,
  ListOrderItemsQuery,
  ListOrdersQuery,
  ListUserOrdersQuery,
  OrderIdParams,
  PatchOrderBody,
  ReplaceOrderBody,
  UserIdParams,
} from './orders.schemas.ts';
import { getOrder, getOrderVersion, listOrderItems, listOrders, withItems } from './orders.service.ts';
import type { OrderStatus } from './orders.rules.ts';
import type { ListedOrder, OrderWithItems } from './orders.store.ts';

const OrderRef = Type.Ref('Order');
const OrderItemRef = Type.Ref('OrderItem');
const security = [{ bearer: ['orders:read'] }];
const writeSecurity = [{ bearer: ['orders:write'] }];

/** The orders with their items where the request's version shows them (v1 does not: no query for them). */
async function withItemsShown<O extends ListedOrder>(
  request: FastifyRequest,
  db: Queryable,
  orders: O[],
): Promise<(O & Partial<OrderWithItems>)[]> {
  return showsField('Order', 'items', request.apiVersion) ? withItems(db, orders) : orders;
}

/** What PUT and PATCH of an order read of their request, beside the body as sent. */
type OrderChangeRequest = FastifyRequest<{
  Params: { orderId: number };
  Headers: { 'if-match'?: string };
  Body: { status?: OrderStatus };
}>;

/**
 * PUT and PATCH: the status the body sets (none: the order's stays), under the precondition the
 * method makes of the body as sent (replacement or merge patch); the 200 is the changed order.
 */
async function changeOrder(request: OrderChangeRequest, reply: FastifyReply, preconditionOf: typeof orderReplacementPrecondition) {
  const principal = requireScope(request, 'orders:write');
  const app = request.server;
  const precondition = preconditionOf(sentBody(request), request.headers['if-match'], request.apiVersion, (record) =>
    representAtVersion(request, 200, orderRepresentation(record)),
  );
  const { order, refund, refundError } = await changeOrderStatus(
    app.paymentDriver,
    principal,
    {
      orderId: request.params.orderId,
      status: request.body.status,
      precondition,
      authorizeRefund: () => void requireAnyScope(request, REFUND_SCOPES),
    },
    app.paymentContext.leaseSeconds,
  );
  if (refundError) request.log.warn({ err: refundError, refundId: refund?.id }, 'the refund of a cancelled order is left to the completer');
  const [shown] = await withItemsShown(request, app.db, [order]);
  reply.headers(ACCEPT_PATCH);
  return sendRepresentation(request, reply, 200, orderRepresentation(shown!), { etag: orderEtag(order, request.apiVersion) });
}

export async function ordersRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/orders',
    {
      schema: {
        tags: ['orders'],
        operationId: 'listOrders',
        summary: 'List orders',
        security,
        description:
          'Customers see their own orders; staff and service clients see all. Filters combine; every unknown parameter is a 400.',
        querystring: ListOrdersQuery,
        response: { 200: Envelope(OrderRef, 'A page of orders.'), ...problems(400, 401, 403, 406) },
      },
    },
    async function listOrdersRoute(request, reply) {
      const principal = requireScope(request, 'orders:read');
      const reader = await app.collectionReader(request);
      const orders = await listOrders(reader, principal, { ...request.query, page: pageOf(request.query, app.cursors) });
      return sendPage(request, reply, { ...orders, data: await withItemsShown(request, reader, orders.data) }, orderRepresentation);
    },
  );

  app.get(
    '/users/:userId/orders',
    {
      schema: {
        tags: ['orders'],
        operationId: 'listUserOrders',
        summary: "List one user's orders",
        security,
        description: 'A customer may list only their own (403 otherwise).',
        params: UserIdParams,
        querystring: ListUserOrdersQuery,
        response: { 200: Envelope(OrderRef, "A page of the user's orders."), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function listUserOrdersRoute(request, reply) {
      const principal = requireScope(request, 'orders:read');
      const reader = await app.collectionReader(request);
      const orders = await listUserOrders(reader, principal, request.params.userId, {
        ...request.query,
        page: pageOf(request.query, app.cursors),
      });
      return sendPage(request, reply, { ...orders, data: await withItemsShown(request, reader, orders.data) }, orderRepresentation);
    },
  );

  app.get(
    '/orders/:orderId',
    {
      schema: {
        tags: ['orders'],
        operationId: 'getOrder',
        summary: 'Get an order',
        security,
        description: 'Carries a strong ETag; with a matching If-None-Match the answer is 304 without a body.',
        params: OrderIdParams,
        headers: IfNoneMatchHeaders,
        response: { 200: OrderRef, 304: Type.Null({ description: 'Not modified.' }), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getOrderRoute(request, reply) {
      const principal = requireScope(request, 'orders:read');
      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch !== undefined) {
        // Revalidation reads the version alone and renders nothing while the tag still matches, so
        // a 304 costs less than the 200 it replaces; a stale tag costs one more read than a plain GET.
        const current = orderEtag(await getOrderVersion(app.db, principal, request.params.orderId), request.apiVersion);
        if (noneMatch(ifNoneMatch, current)) return sendNotModified(reply, current);
      }
      const order = await getOrder(app.db, principal, request.params.orderId);
      const [shown] = await withItemsShown(request, app.db, [order]);
      reply.headers(ACCEPT_PATCH);
      return sendRepresentation(request, reply, 200, orderRepresentation(shown!), { etag: orderEtag(order, request.apiVersion) });
    },
  );

  app.post(
    '/orders',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags: ['orders'],
        operationId: 'placeOrder',
        summary: 'Place an order',
        security: writeSecurity,
        description:
          'The signed-in user orders qty units of products at their current price (v1: one productId and qty; v2: items, 1–100 lines in one currency); the total is the sum of the line totals. An optional Idempotency-Key makes the request safe to retry: a retry with the same key replays the stored response with Idempotent-Replayed: true.',
        body: CreateOrderBody,
        response: { 201: OrderRef, ...problems(400, 401, 403, 406, 409, 413, 415, 422) },
      },
    },
    async function createOrderRoute(request, reply) {
      const principal = requireScope(request, 'orders:write');
      return respondIdempotently(request, reply, async (tx) => {
        const order = await placeOrder(tx, principal, request.body);
        return {
          status: 201,
          body: orderRepresentation(order),
          headers: { etag: orderEtag(order, request.apiVersion), location: resourceUrl(request, `/orders/${order.id}`) },
        };
      });
    },
  );

  app.put(
    '/orders/:orderId',
    {
      schema: {
        tags: ['orders'],
        operationId: 'replaceOrder',
        summary: 'Replace an order (change its status)',
        security: writeSecurity,
        description:
          'Complete replacement of the writable representation. Status changes follow the state machine; the same PUT repeated changes nothing. Cancelling a paid order (staff) refunds what is left of its payment (the refund is recorded with the cancellation and made with the processor right after), so it also needs the scope payments:refund (or payments:write): 403 insufficient_scope otherwise. While a payment of a pending order is in progress, it is neither cancelled nor deleted (409). If-Match is honoured (strong comparison).',
        params: OrderIdParams,
        headers: IfMatchHeaders,
        body: ReplaceOrderBody,
        response: { 200: OrderRef, ...problems(400, 401, 403, 404, 406, 409, 412, 413, 415, 422) },
      },
    },
    async function replaceOrderRoute(request, reply) {
      return changeOrder(request, reply, orderReplacementPrecondition);
    },
  );

  app.patch(
    '/orders/:orderId',
    {
      // Refused before it is read unless it is a merge patch; then a null is refused before the
      // schema, which would call it a 400, can (null is what removes a member, RFC 7396 §1).
      preParsing: requireMergePatch,
      preValidation: async function refuseRemovedMembers(request) {
        assertRemovesNoMember(request.body);
      },
      schema: {
        tags: ['orders'],
        operationId: 'patchOrder',
        summary: 'Change an order in part (JSON Merge Patch)',
        security: writeSecurity,
        description:
          'A JSON Merge Patch (RFC 7396) as application/merge-patch+json: what the body names takes the value it gives, the rest stays. It sets absolute values, so the same PATCH repeated changes nothing and answers the same. Status changes follow the state machine, as with PUT (cancelling a paid order refunds it, and needs payments:refund or payments:write); read-only members may be repeated with their current values (422 otherwise); a null would remove a required member (422). If-Match is honoured (strong comparison). Any other media type is refused with 415 and Accept-Patch.',
        params: OrderIdParams,
        headers: IfMatchHeaders,
        consumes: [MERGE_PATCH_MEDIA_TYPE],
        body: PatchOrderBody,
        response: { 200: OrderRef, ...problems(400, 401, 403, 404, 406, 409, 412, 413, 415, 422) },
      },
    },
    async function patchOrderRoute(request, reply) {
      return changeOrder(request, reply, orderPatchPrecondition);
    },
  );

  app.delete(
    '/orders/:orderId',
    {
      schema: {
        tags: ['orders'],
        operationId: 'deleteOrder',
        summary: 'Delete an order',
        security: writeSecurity,
        description: 'Only pending or cancelled orders. The order disappears from reads; deleting it again answers 204 again.',
        params: OrderIdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(400, 401, 403, 404, 406, 409, 412, 413, 415) },
      },
    },
    async function deleteOrderRoute(request, reply) {
      const principal = requireScope(request, 'orders:write');
      await deleteOrder(app.db, principal, {
        orderId: request.params.orderId,
        precondition: orderIfMatch(request.headers['if-match'], request.apiVersion),
      });
      return reply.code(204).header('cache-control', 'no-store').send(null);
    },
  );

  app.get(
    '/order-items',
    {
      schema: {
        tags: ['orders'],
        operationId: 'listOrderItems',
        summary: "List an order's items",
        description:
          'The lines of one order (`orderId` is required), in line order. Scope orders:read; a customer sees only the items of their own orders (404 otherwise).',
        security,
        querystring: ListOrderItemsQuery,
        response: { 200: Envelope(OrderItemRef, 'A page of order items.'), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function listOrderItemsRoute(request, reply) {
      const principal = requireScope(request, 'orders:read');
      const items = await listOrderItems(await app.collectionReader(request), principal, {
        orderId: request.query.orderId,
        page: pageOf(request.query, app.cursors),
      });
      return sendPage(request, reply, items, orderItemRepresentation);
    },
  );
}
