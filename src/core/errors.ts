// The error catalogue and the domain error. Every problem body orderpay sends has one of these
// codes; docs/errors.md documents each one and a test keeps the two in step. A retired code is
// never reused. Code below the edge throws DomainError (a code, a detail, field errors): no HTTP.
// The catalogue's status is data the edge renders (src/http/problems.ts), like fastify's lib/errors.js.

export interface ErrorDefinition {
  status: number;
  title: string;
  /** What the code means and what the client can do about it (docs/errors.md). */
  description: string;
  /** A transient refusal: clients are told (Retry-After) when to try again. */
  retryAfterSeconds?: number;
}

export const ERRORS = {
  // Requests in general
  REQUEST_BODY_INVALID: {
    status: 400,
    title: 'Request body is invalid',
    description:
      'The JSON body does not match the schema of the operation: a field is missing, has the wrong type or range, or is not a field of the resource (unknown fields are refused, never dropped). `errors[].pointer` names each field (RFC 6901).',
  },
  REQUEST_BODY_MALFORMED: {
    status: 400,
    title: 'Request body is not valid JSON',
    description: 'The body could not be parsed as JSON, or is empty where a body is required.',
  },
  REQUEST_PARAMETER_INVALID: {
    status: 400,
    title: 'Request parameter is invalid',
    description:
      'A path or query parameter has a malformed or out-of-range value, appears more than once, or is combined with one it excludes (`page`, `after` and `before` name a page each: give one). `errors[].parameter` names it.',
  },
  REQUEST_HEADER_INVALID: {
    status: 400,
    title: 'Request header is invalid',
    description: 'A header the operation reads (for example `If-Match`) is malformed.',
  },
  REQUEST_BODY_TOO_LARGE: { status: 413, title: 'Request body is too large', description: 'Request bodies are limited to 64 KiB.' },
  REQUEST_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    description:
      'Bodies must be sent as `Content-Type: application/json`, without a content coding: a body with `Content-Encoding` other than `identity` (gzip, for example) is refused, and the answer carries `Accept-Encoding: identity` (RFC 7694).',
  },
  REQUEST_MALFORMED: {
    status: 400,
    title: 'Request is not valid HTTP/1.1',
    description:
      'The request could not be read (RFC 9112): a malformed request line or header field, an invalid chunk size, both `Content-Length` and `Transfer-Encoding` (or a `Content-Length` that is not one number), or a method this server does not know. The connection is closed.',
  },
  REQUEST_HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Request header fields too large',
    description:
      'The request line and header fields together exceed 16 KiB (RFC 6585 §5): send fewer or smaller headers (large cookies, usually). The connection is closed.',
  },
  REQUEST_EXPECTATION_FAILED: {
    status: 417,
    title: 'Expectation cannot be met',
    description:
      'The request has an `Expect` header other than `100-continue`, the only expectation this server meets (RFC 9110 §10.1.1). The request is not read and the connection is closed; send it again without that expectation.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request timeout',
    description:
      'The request did not arrive in time: its headers within 10 seconds of its first byte, or all of it within 30 seconds (by default; docs/deploy.md). The connection is closed; send the request again on a new one.',
  },
  REQUEST_PRECONDITION_FAILED: {
    status: 412,
    title: 'Precondition failed',
    description:
      '`If-Match` does not match the current entity tag of the resource (strong comparison, RFC 9110 §13.1.1): it changed since you read it. Read it again, then retry.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    title: 'Not found',
    description: 'No resource lives at this path (including an unknown `/v<N>` version prefix).',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but does not support this method; the `Allow` header lists the methods it does support.',
  },
  VERSION_NOT_ACCEPTABLE: {
    status: 406,
    title: 'API version not available',
    description:
      'The `Accept` header names an API version (`application/vnd.orderpay.v<N>+json`) that this server does not serve, or one that contradicts the `/v<N>` path prefix.',
  },
  VERSION_SUNSET: {
    status: 410,
    title: 'API version retired',
    description:
      'The API version was retired on its published sunset date (the `Sunset` header it carried). `migrationGuide` links the guide to the next version ([docs/migrating-to-v2.md](docs/migrating-to-v2.md)).',
  },
  // Collections
  QUERY_UNKNOWN_PARAMETER: {
    status: 400,
    title: 'Unknown query parameter',
    description:
      'The query names a parameter (for example a filter field) that this collection does not document. Parameters are never ignored.',
  },
  QUERY_UNKNOWN_SORT_KEY: {
    status: 400,
    title: 'Unknown sort key',
    description: '`sort` names a field that is not sortable on this collection.',
  },
  QUERY_DUPLICATE_SORT_KEY: { status: 400, title: 'Duplicate sort key', description: '`sort` names the same field twice.' },
  QUERY_CURSOR_INVALID: {
    status: 400,
    title: 'Cursor is invalid',
    description:
      "`after` or `before` is not a cursor this collection gave for these filters and sort: it was altered, cut short, or given by another collection, with other filters or another sort (the caller's own scope counts: a cursor does not pass from one customer to another). `errors[].parameter` names it. Cursors do not expire; start again from the first page, with the filters and sort the cursor was given for. A value not of a cursor's shape at all (two base64url parts joined by a dot, at most 2048 characters) is `REQUEST_PARAMETER_INVALID` instead, as any malformed parameter.",
  },
  // Authentication and authorization (RFC 6750)
  AUTH_TOKEN_MISSING: {
    status: 401,
    title: 'Authentication required',
    description: 'Send an access token as `Authorization: Bearer <token>`.',
  },
  AUTH_TOKEN_INVALID: {
    status: 401,
    title: 'Access token is invalid',
    description:
      'The access token was refused. `detail` and the `WWW-Authenticate` `error_description` name the check it failed: malformed, algorithm, signing key, signature, not a JWT access token, a claim, issuer, audience, not yet valid, expired, revoked, or sent under the wrong scheme for its binding (a DPoP-bound token as Bearer, an unbound one as DPoP). Obtain a new one from the server that is to accept it, or send it under the scheme the error names.',
  },
  AUTH_DPOP_PROOF_INVALID: {
    status: 401,
    title: 'DPoP proof is invalid',
    description:
      'The access token is bound to a key (DPoP, RFC 9449) and the request\'s `DPoP` proof was missing or refused: `detail` and the `WWW-Authenticate` `error_description` (`error="invalid_dpop_proof"`) name the check it failed. Send the request again with a new proof, signed by the bound key, for this method, URL and token (docs/api.md, "Calling the API with DPoP").',
  },
  AUTH_DPOP_UNAVAILABLE: {
    status: 503,
    title: 'DPoP proofs cannot be checked',
    description:
      'The store that remembers the DPoP proofs already used (PostgreSQL, or Redis when configured) cannot be reached, so no proof can be told apart from a replay and none is accepted. Nothing was done: retry after `Retry-After` with a new proof. Bearer tokens are not affected.',
    retryAfterSeconds: 1,
  },
  AUTH_TOKEN_NOT_IN_HEADER: {
    status: 400,
    title: 'Access token must be sent in the Authorization header',
    description: 'Access tokens in the query string or the body are refused (RFC 9700 §2.5 / RFC 6750 §2.3).',
  },
  AUTH_INSUFFICIENT_SCOPE: {
    status: 403,
    title: 'Insufficient scope',
    description: 'The access token lacks the scope this operation needs; `WWW-Authenticate` names it.',
  },
  AUTH_FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    description: "The caller may not act on this resource (for example another user's order collection, or a staff-only operation).",
  },
  AUTH_SUBJECT_UNKNOWN: {
    status: 403,
    title: 'Unknown user',
    description: 'The access token names a user that does not exist (any more).',
  },
  AUTH_METRICS_TOKEN_INVALID: {
    status: 401,
    title: 'Metrics token required',
    description:
      '`/metrics` requires the token configured in `ORDERPAY_METRICS_TOKEN`, as `Authorization: Bearer <token>`; it was missing or wrong (docs/deploy.md).',
  },
  // Orders
  ORDER_NOT_FOUND: {
    status: 404,
    title: 'Order not found',
    description:
      'No order with this id exists, it was deleted, or it belongs to another customer (the answer is the same, so ids reveal nothing).',
  },
  ORDER_TRANSITION_NOT_ALLOWED: {
    status: 409,
    title: 'Order status change not allowed',
    description:
      'The order state machine (docs/api.md) does not allow this caller to move the order from its current status to the requested one. `currentStatus` and `allowedStatuses` say what is possible.',
  },
  ORDER_NOT_DELETABLE: {
    status: 409,
    title: 'Order cannot be deleted',
    description: 'Only `pending` or `cancelled` orders can be deleted; a paid, shipped or delivered order is kept.',
  },
  ORDER_PAYMENT_IN_PROGRESS: {
    status: 409,
    title: 'Order has a payment in progress',
    description:
      'A payment of the order is in progress (`paymentStatus`): until the processor decides, the order is neither cancelled nor deleted, since the payment could still pay it. Retry once it is decided, usually within seconds.',
  },
  ORDER_READ_ONLY_FIELD: {
    status: 422,
    title: 'Read-only field changed',
    description: 'A PUT or PATCH body may repeat the read-only fields of the order, but only with their current values.',
  },
  ORDER_MEMBER_REQUIRED: {
    status: 422,
    title: 'Required member removed',
    description:
      'A merge patch (PATCH, RFC 7396) sets a member to `null`, which removes it; every member of an order is required. `errors[].pointer` names each one: send its value or leave it out.',
  },
  ORDER_CUSTOMER_REQUIRED: {
    status: 403,
    title: 'Orders are placed by users',
    description: 'Orders are created on behalf of the signed-in user; a service (client credentials) token has no customer.',
  },
  ORDER_PRODUCT_NOT_FOUND: { status: 422, title: 'Product does not exist', description: '`productId` names no product.' },
  ORDER_PRODUCT_INACTIVE: { status: 422, title: 'Product is not for sale', description: '`productId` names a product that is not active.' },
  ORDER_CURRENCY_MIXED: {
    status: 422,
    title: 'Order lines in several currencies',
    description: 'An order is in one currency; the line `errors[].pointer` names is priced in another. Place one order per currency.',
  },
  ORDER_TOTAL_TOO_LARGE: {
    status: 422,
    title: 'Order total too large',
    description: 'The lines add up to more than 10^15 minor units, the largest amount the API represents.',
  },
  // Products
  PRODUCT_NOT_FOUND: { status: 404, title: 'Product not found', description: 'No product with this id exists.' },
  // Events and webhooks (docs/webhooks.md)
  EVENT_NOT_FOUND: {
    status: 404,
    title: 'Event not found',
    description: 'No event with this id exists (events are kept `ORDERPAY_EVENTS_RETENTION_DAYS` days).',
  },
  WEBHOOK_ENDPOINT_NOT_FOUND: { status: 404, title: 'Webhook endpoint not found', description: 'No webhook endpoint with this id exists.' },
  WEBHOOK_DELIVERY_NOT_FOUND: {
    status: 404,
    title: 'Webhook delivery not found',
    description:
      "The endpoint has no delivery with this id: it never existed, it was purged with its event, or it is another endpoint's (the answer is the same).",
  },
  WEBHOOK_ENDPOINT_DISABLED: {
    status: 409,
    title: 'Webhook endpoint disabled',
    description:
      'A disabled endpoint is sent nothing, pings and redeliveries included. Enable it first (`PUT` with `"disabled": false`), then ask again.',
  },
  WEBHOOK_ENDPOINT_API_VERSION_RETIRED: {
    status: 422,
    title: 'Webhook endpoint API version retired',
    description:
      "The request pins an endpoint to an API version past its sunset, or enables an endpoint pinned to one. Such endpoints were disabled at the sunset (`disabledReason` `api_version_retired`): their receivers read that version's objects, and the next version's differ (v2's money objects). Once the receiver reads a later version, `PUT` the endpoint with that `apiVersion` and `\"disabled\": false` in one request. `errors[].pointer` names `/apiVersion` or `/disabled`.",
  },
  WEBHOOK_EVENT_NOT_SUBSCRIBED: {
    status: 422,
    title: 'Event not subscribed to',
    description:
      "An event is sent again only to an endpoint that subscribes to its type (`enabledEvents`) or that it was delivered to before. Add the type to the endpoint's `enabledEvents` first.",
  },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    title: 'Webhook URL refused',
    description:
      'The endpoint `url` is not one orderpay delivers to: it must be `https` (plain `http` only with `ORDERPAY_WEBHOOKS_ALLOW_PRIVATE` in development), carry no credentials, and its host must resolve to public addresses only (not loopback, private, link-local, CGNAT, multicast or unspecified). `errors[].detail` says which rule it broke (docs/webhooks.md, "Safety").',
  },
  // Users
  USER_NOT_FOUND: { status: 404, title: 'User not found', description: 'No user with this id exists.' },
  // Idempotency keys (docs/payments.md)
  IDEMPOTENCY_KEY_MISSING: {
    status: 400,
    title: 'Idempotency-Key is required',
    description:
      'This operation moves money and must be safe to retry: send `Idempotency-Key` with a unique value per logical operation (a UUID, for example), and the same value on every retry of it.',
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    title: 'Idempotency-Key is invalid',
    description: 'An idempotency key is 1–255 visible ASCII characters, sent bare or as a quoted structured-field string (`"…"`).',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    title: 'Idempotency-Key reused for a different request',
    description:
      'The key was first used with another method, path or body (compared as canonical JSON, so key order does not matter). A retry must repeat the original request exactly; a new operation needs a new key.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    title: 'Request with this Idempotency-Key in progress',
    description:
      'The first request with this key is still being processed. Retry after `Retry-After` seconds to receive its stored result. A key held by a process that died is freed once its lock lapses (30 s by default).',
    retryAfterSeconds: 1,
  },
  // Payments
  PAYMENT_NOT_FOUND: {
    status: 404,
    title: 'Payment not found',
    description: 'No payment with this id exists, or it belongs to another customer (the answer is the same, so ids reveal nothing).',
  },
  PAYMENT_ORDER_NOT_FOUND: {
    status: 404,
    title: 'Order to pay not found',
    description: '`orderId` names no order the caller may pay: it does not exist, was deleted, or belongs to another customer.',
  },
  PAYMENT_ORDER_NOT_PAYABLE: {
    status: 409,
    title: 'Order cannot be paid',
    description: 'Only a `pending` order can be paid; `currentStatus` says where it is (a `paid` order already took its payment).',
  },
  PAYMENT_ORDER_PAYMENT_IN_PROGRESS: {
    status: 409,
    title: 'Order has a payment in progress',
    description:
      'Another payment of the order (under another Idempotency-Key: a double click, a second device) is in progress; `paymentStatus` says where it is. Only if it does not succeed can the order be paid again. Not stored for the key: a retry after the other payment ended gets a fresh answer.',
  },
  PAYMENT_AMOUNT_MISMATCH: {
    status: 422,
    title: 'Amount does not match the order',
    description: 'A payment of an order must be for exactly its total, in its currency; `expectedAmount` and `expectedCurrency` give them.',
  },
  PAYMENT_METHOD_REQUIRED: {
    status: 422,
    title: 'Payment method required',
    description:
      "The payment processor charges a payment method (Stripe: a `pm_…` id), and the request names none. From API version 3 a payment names it in `paymentMethod`, or waits as `requires_action` for the customer to give it through the processor's own library; versions before cannot, so they cannot pay through such a processor.",
  },
  PAYMENT_NOT_REFUNDABLE: {
    status: 409,
    title: 'Payment cannot be refunded',
    description:
      'Only a `succeeded` or `partially_refunded` payment can be refunded: a declined payment took no money, a `refunded` one has none left.',
  },
  PAYMENT_REFUND_EXCEEDS_BALANCE: {
    status: 422,
    title: 'Refund exceeds what is left',
    description: 'The refunds of a payment never add up to more than its amount; `refundableAmount` says what can still be refunded.',
  },
  PAYMENT_REFUND_CURRENCY_MISMATCH: {
    status: 422,
    title: 'Refund in another currency',
    description: "A refund's `amount.currency` must be the payment's currency.",
  },
  PAYMENT_REFUND_NOT_FOUND: { status: 404, title: 'Refund not found', description: 'The payment has no refund with this id.' },
  PAYMENT_REFUND_FAILED: {
    status: 422,
    title: 'Refund failed',
    description:
      'The processor could not make the refund (`failureReason` says why, in its words; for example the card was closed); the amount counts as not refunded again. Answered in API versions whose refunds have no status (v1, v2); later ones show the refund with `status: failed`.',
  },
  PAYMENT_PROCESSOR_UNAVAILABLE: {
    status: 503,
    title: 'Payment processor unavailable',
    description:
      'The payment processor failed or did not answer within 10 seconds. The payment or refund is kept in progress and the processor is asked about it again on a schedule; retry the same request with the same key after `Retry-After` to receive its outcome. The processor receives the same reference on every try, so a charge it took before failing is not taken twice.',
    retryAfterSeconds: 1,
  },
  PAYMENT_PROCESSOR_EVENT_INVALID: {
    status: 400,
    title: 'Processor event not verified',
    description:
      "For the payment processor only (`POST /processors/{name}/events`): the body is not an event signed with the secret orderpay shares with the processor (Stripe: the `Stripe-Signature` header, within 5 minutes of its timestamp). Nothing changed. The processor's dashboard shows the attempt; check `STRIPE_WEBHOOK_SECRET`.",
  },
  PAYMENT_IN_PROGRESS: {
    status: 503,
    title: 'Payment in progress',
    description:
      'The processor has not decided yet (the charge is processing, or waits for the customer) and this API version shows only final outcomes. The key is kept: retry the same request with the same key after `Retry-After` to receive the outcome. Later versions answer at once with the payment in progress (docs/payments.md, "Versions").',
    retryAfterSeconds: 1,
  },
  // Rate limits (docs/api.md, "Rate limits")
  RATE_LIMITED: {
    status: 429,
    title: 'Too many requests',
    description:
      'The caller has used up a budget of the current window: its reads, its writes, or its payments and refunds (per caller, or per client IP without a valid access token). `violatedPolicies` names the budget, `RateLimit` shows it at zero, and `Retry-After` says in how many seconds the window ends. Nothing was done.',
  },
  RATE_LIMIT_UNAVAILABLE: {
    status: 503,
    title: 'Payments paused: rate limits cannot be counted',
    description:
      'The store the rate limits are counted in (PostgreSQL, or Redis when configured) cannot be reached, and payments and refunds are not taken without their limit. Nothing was done and the idempotency key was not used: retry after `Retry-After`. Reads and other writes go on meanwhile, unlimited.',
    retryAfterSeconds: 1,
  },
  // Server side
  RESOURCE_CONFLICT: {
    status: 409,
    title: 'Conflict',
    description:
      'The change conflicts with the current state of another resource (a unique value already taken, or a concurrent change). Read the resource again and retry.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    title: 'Service unavailable',
    description:
      'The database is unreachable or overloaded, the server is overloaded (its event loop lags, or it is out of file descriptors), or it is shutting down (the answer then carries `Connection: close`: retry on a new connection, which reaches another instance). Retry after the `Retry-After` delay.',
    retryAfterSeconds: 1,
  },
  INTERNAL_ERROR: {
    status: 500,
    title: 'Internal server error',
    description: 'An unexpected failure on our side. The body carries no details; quote `requestId` when you report it.',
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  detail: string;
  /** RFC 6901 JSON Pointer into the request body. */
  pointer?: string;
  /** Name of the query, path or header parameter. */
  parameter?: string;
}

export interface DomainErrorOptions {
  errors?: FieldError[];
  /** Extension members of the problem body (RFC 9457 §3.2), e.g. currentStatus. */
  extensions?: Record<string, unknown>;
}

/** A refusal by the rules, with a catalogue code; the edge renders it as a problem. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly options: DomainErrorOptions;

  constructor(code: ErrorCode, detail: string, options: DomainErrorOptions = {}) {
    super(detail);
    this.name = 'DomainError';
    this.code = code;
    this.detail = detail;
    this.options = options;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

/** The problem `type` URI of a code: a page this service serves (GET /problems/{slug}). */
export function problemSlug(code: ErrorCode): string {
  return code.toLowerCase().replaceAll('_', '-');
}
