// v2: an order holds several items (1–100 lines, one currency) and embeds them. Before v2 an order
// was placed for one product ({ productId, qty }) and its items were read at /order-items only.
import type { TObject, TSchema } from 'typebox';
import { reshape, type RequestChange, type VersionChange, without } from './version-change.ts';

const FIRST_LINE = /^\/items\/0(?=\/|$)/;

/** A body that repeats an order's members (PUT, PATCH): v1's has no items to repeat. */
const orderWithoutItems: RequestChange = {
  schema: (newer) => reshape(newer, (p) => without(p, ['items'])),
  upgrade: (body) => body,
};

export const orderItems: VersionChange = {
  version: 2,
  description:
    'Orders hold several items: `POST /orders` takes `{ "items": [{ "productId", "qty" }, …] }` (1–100 lines, one currency) instead of one `productId` and `qty`, and an order embeds its `items`.',
  resources: {
    Order: {
      schema: (newer) => reshape(newer, (p) => without(p, ['items'])),
      downgrade: ({ items: _items, ...order }) => order,
    },
  },
  requests: {
    CreateOrderBody: {
      schema: (newer) =>
        reshape(newer, (p) => {
          const line = (p.items as TObject & { items: TObject }).items;
          return { ...line.properties } as Record<string, TSchema>;
        }),
      upgrade: ({ productId, qty }) => ({ items: [{ productId, qty }] }),
      // The one line a v1 body describes is the order's first (and only) item.
      pointer: (pointer) => pointer.replace(FIRST_LINE, ''),
    },
    ReplaceOrderBody: orderWithoutItems,
    PatchOrderBody: orderWithoutItems,
  },
};
