// Order and order item representations and the request schemas of their routes.
import { Type, type Static, type TSchema } from 'typebox';
import { Id, Money, MoneyOf, PageParams, SortParam, Timestamp } from '../http/schemas.ts';
import { MAX_ORDER_LINES, ORDER_SORT_KEYS, ORDER_STATUSES, type OrderStatus } from './orders.rules.ts';

export const OrderStatusSchema = Type.Unsafe<OrderStatus>({
  type: 'string',
  enum: [...ORDER_STATUSES],
  description: 'pending → paid (by a payment) → shipped → delivered; pending or paid → cancelled. See docs/api.md.',
});

export const Order = Type.Object(
  {
    id: Id('Identifier of the order.'),
    status: OrderStatusSchema,
    customerId: Id('The user who placed the order.'),
    total: MoneyOf(Money('Order total.'), "Order total: the sum of its items' line totals, in their one currency."),
    createdAt: Timestamp('When the order was placed.'),
    updatedAt: Timestamp('When the order last changed.'),
    items: Type.Array(Type.Ref('OrderItem'), {
      minItems: 1,
      maxItems: MAX_ORDER_LINES,
      description: 'The order lines, in the order placed.',
    }),
  },
  { $id: 'Order', additionalProperties: false },
);
export type Order = Static<typeof Order>;

export const OrderItem = Type.Object(
  {
    id: Id('Identifier of the order item.'),
    orderId: Id('The order this item belongs to.'),
    productId: Id('The product ordered.'),
    qty: Type.Integer({ format: 'int32', minimum: 1, maximum: 1000 }),
    unitPrice: MoneyOf(Money('Price of one unit when the order was placed.'), 'Price of one unit when the order was placed.'),
    lineTotal: MoneyOf(Money('unitPrice × qty.'), 'unitPrice × qty.'),
  },
  { $id: 'OrderItem', additionalProperties: false },
);
export type OrderItem = Static<typeof OrderItem>;

export const OrderLineBody = Type.Object(
  {
    productId: Id('The product to order.'),
    qty: Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, description: 'Quantity, 1–1000.' }),
  },
  { additionalProperties: false },
);

export const CreateOrderBody = Type.Object(
  {
    items: Type.Array(OrderLineBody, {
      minItems: 1,
      maxItems: MAX_ORDER_LINES,
      description: `The order lines, 1–${MAX_ORDER_LINES}; every product in one currency.`,
    }),
  },
  { title: 'CreateOrderBody', additionalProperties: false },
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

// A body that changes an order may repeat what a GET showed: its read-only members (OpenAPI's
// readOnly: sent back, they must be the current values, or 422) and server-managed ones (ignored).
// A PUT body's take what v1 always took (its contract is frozen): any integer, any string.
const ReadOnly = { readOnly: true } as const;
const AnyInteger = (description: string) => Type.Integer({ format: 'int64', description, ...ReadOnly });
const Ignored = 'Server-managed: ignored.';
/** An order's items in a body that changes it: server-managed, so ignored whatever they hold. */
const IgnoredItems = Type.Optional(Type.Array(Type.Unknown(), { maxItems: MAX_ORDER_LINES, description: Ignored, ...ReadOnly }));

export const ReplaceOrderBody = Type.Object(
  {
    status: OrderStatusSchema,
    id: Type.Optional(AnyInteger(Ignored)),
    customerId: Type.Optional(AnyInteger('Read-only.')),
    total: Type.Optional(
      Type.Object(
        { value: AnyInteger('Read-only.'), currency: Type.String({ description: 'Read-only.', ...ReadOnly }) },
        { additionalProperties: false, description: 'Read-only.', ...ReadOnly },
      ),
    ),
    createdAt: Type.Optional(Type.String({ description: Ignored, ...ReadOnly })),
    updatedAt: Type.Optional(Type.String({ description: Ignored, ...ReadOnly })),
    items: IgnoredItems,
  },
  {
    title: 'ReplaceOrderBody',
    additionalProperties: false,
    description:
      'The complete writable representation of an order: its status. A GET answer may be sent back as it is: server-managed fields (id, createdAt, updatedAt, and in v2 items) are ignored, and the other read-only fields must equal the current ones or be absent.',
  },
);
export type ReplaceOrderBody = Static<typeof ReplaceOrderBody>;

/** A member of an order as a body may repeat it: optional, read-only. */
const repeated = (schema: TSchema) => Type.Optional(Type.Unsafe({ ...schema, ...ReadOnly }));

// The members of an order, each optional at every depth: a merge patch names only what it sets
// (RFC 7396), {"total": {"value": …}} included. A new operation, so typed as the order is (a PUT
// body's looser types are v1's, frozen).
const { id, customerId, createdAt, updatedAt, total } = Order.properties;
export const PatchOrderBody = Type.Object(
  {
    status: Type.Optional(OrderStatusSchema),
    id: repeated(id),
    customerId: repeated(customerId),
    total: repeated(
      Type.Object(
        { value: repeated(total.properties.value), currency: repeated(total.properties.currency) },
        { additionalProperties: false, description: (total as TSchema & { description?: string }).description },
      ),
    ),
    createdAt: repeated(createdAt),
    updatedAt: repeated(updatedAt),
    items: IgnoredItems,
  },
  {
    title: 'PatchOrderBody',
    additionalProperties: false,
    description:
      'A JSON Merge Patch (RFC 7396) of the order, sent as application/merge-patch+json: the members it names take the values it gives, the others stay. Status is the writable member; read-only members (customerId, total) may be repeated with their current values, server-managed ones (id, createdAt, updatedAt, items) are ignored, as in a PUT. Every member of an order is required, so a null (which removes a member) is refused with 422.',
  },
);
export type PatchOrderBody = Static<typeof PatchOrderBody>;

export const OrderFilterParams = {
  status: Type.Optional(OrderStatusSchema),
  minTotal: Type.Optional(
    Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Only orders whose total (minor units) is at least this.',
    }),
  ),
  sort: Type.Optional(
    SortParam(
      ORDER_SORT_KEYS,
      'Comma-separated keys from createdAt, status, total, id; "-" prefix for descending. Default createdAt. id is always the last tie-breaker.',
      '-createdAt,status',
    ),
  ),
  ...PageParams,
};

export const ListOrdersQuery = Type.Object(
  { ...OrderFilterParams, customerId: Type.Optional(Id('Only orders of this customer.')) },
  { additionalProperties: false },
);
export type ListOrdersQuery = Static<typeof ListOrdersQuery>;

// The same parameters as GET /orders: customerId can only agree with the path's user or select nothing.
export const ListUserOrdersQuery = Type.Object(
  { ...OrderFilterParams, customerId: Type.Optional(Id('Only orders of this customer: userId gives them all, any other none.')) },
  { additionalProperties: false },
);
export type ListUserOrdersQuery = Static<typeof ListUserOrdersQuery>;

export const ListOrderItemsQuery = Type.Object(
  { orderId: Id('The order whose items to list (required).'), ...PageParams },
  { additionalProperties: false },
);
export type ListOrderItemsQuery = Static<typeof ListOrderItemsQuery>;

export const OrderIdParams = Type.Object({ orderId: Id('Identifier of the order.') }, { additionalProperties: false });
export const UserIdParams = Type.Object({ userId: Id('Identifier of the user.') }, { additionalProperties: false });
