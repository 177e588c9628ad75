// OpenAPI links (OpenAPI 3.1 §4.8.20): from an answer that shows a resource, the operations a
// client can call next on it, each parameter filled from the answer's body. Tools that follow
// links (generated clients, Schemathesis' stateful phase) learn how the operations chain.

interface Link {
  operationId: string;
  parameters: Record<string, string>;
}
interface Operation {
  operationId?: unknown;
  responses?: Record<string, { links?: Record<string, unknown> }>;
}

/** operationId → the parameter of it that a resource fills, by the JSON Pointer into the resource. */
type Next = Record<string, Record<string, string>>;

const byId = (parameter: string, ...operationIds: string[]): Next =>
  Object.fromEntries(operationIds.map((operationId) => [operationId, { [parameter]: '/id' }]));

const ORDER: Next = {
  ...byId('orderId', 'getOrder', 'replaceOrder', 'patchOrder', 'deleteOrder'),
  listOrderItems: { 'query.orderId': '/id' },
  listPayments: { 'query.orderId': '/id' },
};
const PRODUCT: Next = byId('productId', 'getProduct', 'replaceProduct');
const PAYMENT: Next = byId('paymentId', 'getPayment', 'createRefund', 'listRefunds');
const REFUND: Next = { getRefund: { paymentId: '/paymentId', refundId: '/id' }, getPayment: { paymentId: '/paymentId' } };
const WEBHOOK_ENDPOINT: Next = byId(
  'webhookEndpointId',
  'getWebhookEndpoint',
  'replaceWebhookEndpoint',
  'deleteWebhookEndpoint',
  'listWebhookDeliveries',
  'pingWebhookEndpoint',
  'rotateWebhookEndpointSecret',
);

/** The operations whose success shows one resource, by operationId, with that success's status. */
const SHOWS: Record<string, { status: string; next: Next }> = {
  placeOrder: { status: '201', next: ORDER },
  getOrder: { status: '200', next: ORDER },
  replaceOrder: { status: '200', next: ORDER },
  patchOrder: { status: '200', next: ORDER },
  createProduct: { status: '201', next: PRODUCT },
  getProduct: { status: '200', next: PRODUCT },
  replaceProduct: { status: '200', next: PRODUCT },
  createPayment: { status: '201', next: PAYMENT },
  getPayment: { status: '200', next: PAYMENT },
  createRefund: { status: '201', next: REFUND },
  getRefund: { status: '200', next: REFUND },
  createWebhookEndpoint: { status: '201', next: WEBHOOK_ENDPOINT },
  getWebhookEndpoint: { status: '200', next: WEBHOOK_ENDPOINT },
  replaceWebhookEndpoint: { status: '200', next: WEBHOOK_ENDPOINT },
};

const linkName = (operationId: string) => operationId[0]!.toUpperCase() + operationId.slice(1);

/** The operation's success gains a link to each next operation the same document has. */
export function documentLinks(operation: Operation, operationIds: ReadonlySet<string>): void {
  const shows = typeof operation.operationId === 'string' ? SHOWS[operation.operationId] : undefined;
  const response = shows && operation.responses?.[shows.status];
  if (!shows || !response) return;
  const links: Record<string, Link> = {};
  for (const [operationId, parameters] of Object.entries(shows.next)) {
    if (!operationIds.has(operationId) || operationId === operation.operationId) continue;
    links[linkName(operationId)] = {
      operationId,
      parameters: Object.fromEntries(Object.entries(parameters).map(([name, pointer]) => [name, `$response.body#${pointer}`])),
    };
  }
  response.links = { ...response.links, ...links };
}
