// What an event carries, as the API shows it: each resource's record (stored with the event when
// its change committed) through its domain's representation, then passed back to the reader's API
// version. Composed here, beside the composition root, because no domain may import another's
// representation: GET /events and the webhook dispatcher get it from buildApp.
import type { RenderEventObject } from './events/events.representation.ts';
import { downgrade } from './http/versions/versions.ts';
import type { JsonObject } from './http/versions/version-change.ts';
import { orderRepresentation } from './orders/orders.representation.ts';
import type { OrderWithItems } from './orders/orders.store.ts';
import { paymentRepresentation, refundRepresentation } from './payments/payments.representation.ts';
import type { PaymentRecord, RefundRecord } from './payments/payments.store.ts';
import { productRepresentation } from './products/products.representation.ts';
import type { ProductRecord } from './products/products.store.ts';
import { webhookEndpointRepresentation } from './webhooks/endpoints.representation.ts';
import type { WebhookEndpointRecord } from './webhooks/endpoints.store.ts';

/** Each object type: the resource schema it is ($id, for the version changes) and its latest representation. */
const REPRESENTATIONS: Record<Parameters<RenderEventObject>[0], { resource: string; represent: (record: never) => object }> = {
  order: { resource: 'Order', represent: (record: OrderWithItems) => orderRepresentation(record) },
  payment: { resource: 'Payment', represent: (record: PaymentRecord) => paymentRepresentation(record) },
  refund: { resource: 'Refund', represent: (record: RefundRecord) => refundRepresentation(record) },
  product: { resource: 'Product', represent: (record: ProductRecord) => productRepresentation(record) },
  webhook_endpoint: {
    resource: 'WebhookEndpoint',
    represent: (record: WebhookEndpointRecord) => webhookEndpointRepresentation(record),
  },
};

export const renderEventObject: RenderEventObject = (objectType, object, apiVersion) => {
  const { resource, represent } = REPRESENTATIONS[objectType];
  return downgrade(resource, represent(object as never) as JsonObject, apiVersion);
};
