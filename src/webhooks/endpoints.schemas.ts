// Webhook endpoint and delivery representations, and the request schemas of their routes.
import { Type, type Static, type TSchema } from 'typebox';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { ALL_EVENTS } from '../events/events.rules.ts';
import { Id, PageParams, routeChecked, SortParam, Timestamp } from '../http/schemas.ts';
import {
  DELIVERY_STATES,
  type DeliveryState,
  DISABLED_REASONS,
  type DisabledReason,
  MAX_ATTEMPTS_SHOWN,
  MAX_ERROR_SHOWN,
  MAX_RESPONSE_BODY_SHOWN,
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_ENDPOINT_SORT_KEYS,
} from './endpoints.rules.ts';

const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION_LENGTH = 500;
const EVENT_TYPE_PATTERN = '^[a-z][a-z_]*\\.[a-z][a-z_]*$';
const EVENT_ID_PATTERN = '^evt_[A-Za-z0-9_-]{22}$';

const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

const Url = Type.String({
  format: 'uri',
  maxLength: MAX_URL_LENGTH,
  description:
    'Where deliveries are POSTed: https, on a host that resolves to public addresses only (docs/webhooks.md, "Safety"). Shown normalised.',
  examples: ['https://hooks.example.com/orderpay'],
});

// The closed list of what may be subscribed to, in the documents; the service checks it against the
// endpoint's apiVersion and names each entry it refuses (endpoints.rules.ts: assertEnabledEvents).
const EnabledEvents = Type.Array(routeChecked(Type.String({ maxLength: 64 }), { enum: [ALL_EVENTS, ...SUBSCRIBABLE_EVENT_TYPES] }), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENT_TYPES.length,
  uniqueItems: true,
  description: `The event types delivered to the endpoint (docs/webhooks.md, "Event types"): types its apiVersion shows (a type of a later version is a 400); or ["${ALL_EVENTS}"] for every type it shows, those added later included.`,
  examples: [['order.paid', 'refund.succeeded']],
});

const ApiVersion = Type.Integer({
  format: 'int32',
  minimum: API_VERSION_NUMBERS[0],
  maximum: LATEST_API_VERSION,
  description: `The API version the event objects are rendered in, as GET would show them in that version (default ${LATEST_API_VERSION}, the latest).`,
});

const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, description: 'Free text for people; orderpay does not read it.' });

const Disabled = Type.Boolean({
  description: 'A disabled endpoint is sent nothing until it is enabled again (disabledReason says why it is).',
});

const DisabledReasonSchema = Nullable(
  Type.Unsafe<DisabledReason>({ type: 'string', enum: [...DISABLED_REASONS] }),
  'Why the endpoint is disabled; null while it is enabled. requested: a POST or PUT said "disabled": true. failing: every attempt failed for 5 days. api_version_retired: its apiVersion reached its sunset, and it cannot be enabled unless a PUT pins it to a later version (docs/webhooks.md, "Versions").',
);

const Backlog = Type.Object(
  {
    pending: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Deliveries not yet succeeded or failed: due, being sent, or waiting for a retry.',
    }),
    oldestDueAt: Nullable(
      Timestamp('When the longest-waiting delivery due now came due.'),
      'When the longest-waiting of the deliveries due now came due (its lag); null when none is due now.',
    ),
  },
  { additionalProperties: false },
);

const endpointProperties = {
  id: Id('Identifier of the webhook endpoint.'),
  url: Url,
  enabledEvents: EnabledEvents,
  apiVersion: ApiVersion,
  description: Description,
  disabled: Disabled,
  disabledReason: DisabledReasonSchema,
  failingSince: Nullable(
    Timestamp('Since when every delivery attempt to the endpoint has failed.'),
    'Since when every delivery attempt has failed; null while the endpoint answers (after any success).',
  ),
  lastSucceededAt: Nullable(
    Timestamp('When an attempt to the endpoint last succeeded, to within about a second.'),
    'When an attempt last succeeded (a 2xx), to within about a second: a busy endpoint has it written once a second, not at every success. null when none is on record. A live figure, outside the ETag.',
  ),
  backlog: Nullable(
    Backlog,
    "The endpoint's deliveries still pending, counted when it was read: a live figure, outside the ETag. null in an event's data.object, which records the endpoint's settings, not its traffic.",
  ),
  previousSecretExpiresAt: Nullable(
    Timestamp('Until when the secret replaced by the last rotation still signs deliveries.'),
    'Until when the secret replaced by the last rotation still signs deliveries beside the current one (24 hours after the rotation); null if the secret was never rotated.',
  ),
  createdAt: Timestamp('When the endpoint was registered.'),
  updatedAt: Timestamp(
    'When the endpoint last changed: a replacement, a secret rotation, a disable, failingSince set or cleared; never for lastSucceededAt or backlog.',
  ),
};

export const WebhookEndpoint = Type.Object(endpointProperties, { $id: 'WebhookEndpoint', additionalProperties: false });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** The endpoint with its signing secret: the answer of a creation and of a rotation, never of a read. */
export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointProperties,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]{32}$',
      maxLength: 38,
      description:
        'The signing secret (Standard Webhooks: `whsec_` and the base64 of the HMAC-SHA256 key). Shown in this answer only: store it now; it cannot be read again, only rotated.',
    }),
  },
  {
    $id: 'WebhookEndpointWithSecret',
    additionalProperties: false,
    description: 'A webhook endpoint and its new signing secret, shown this once.',
  },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

const DeliveryStateSchema = Type.Unsafe<DeliveryState>({
  type: 'string',
  enum: [...DELIVERY_STATES],
  description: 'pending (due at nextAttemptAt, or being sent), succeeded (a 2xx answer), failed (the retries ran out).',
});

const Attempt = Type.Object(
  {
    attemptedAt: Timestamp('When the attempt was made.'),
    statusCode: Nullable(
      Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }),
      "The endpoint's HTTP status; null when no answer came (refused, timed out, an address the guard refuses, no outcome recorded) or its status was none from 100 to 599 (error says which).",
    ),
    durationMs: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'How long the attempt took.' }),
    error: Nullable(Type.String({ maxLength: MAX_ERROR_SHOWN }), 'Why the attempt failed; null when it succeeded.'),
    responseBody: Nullable(
      Type.String({ maxLength: MAX_RESPONSE_BODY_SHOWN }),
      'The first 1 KiB of the response body, as text: each byte that is not UTF-8 shown as U+FFFD, each NUL as U+2400; null when no answer came.',
    ),
  },
  { additionalProperties: false },
);

export const WebhookDelivery = Type.Object(
  {
    id: Id('Identifier of the delivery.'),
    endpointId: Id('The webhook endpoint the delivery goes to.'),
    eventId: Type.String({ pattern: EVENT_ID_PATTERN, maxLength: 26, description: 'The event delivered (its webhook-id header).' }),
    eventType: Type.String({ pattern: EVENT_TYPE_PATTERN, maxLength: 64, description: 'The type of the event delivered.' }),
    state: DeliveryStateSchema,
    attemptCount: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Attempts made so far.' }),
    nextAttemptAt: Nullable(Timestamp('When the next attempt is due.'), 'When the next attempt is due; null once succeeded or failed.'),
    attempts: Type.Array(Attempt, {
      maxItems: MAX_ATTEMPTS_SHOWN,
      description: `Its attempts, oldest first (the latest ${MAX_ATTEMPTS_SHOWN} when there were more).`,
    }),
    createdAt: Timestamp('When the delivery was created (the event, a redelivery, a ping).'),
    updatedAt: Timestamp('When the delivery last changed.'),
  },
  { $id: 'WebhookDelivery', additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookEndpointBody = Type.Object(
  { url: Url, enabledEvents: EnabledEvents, apiVersion: ApiVersion, description: Description, disabled: Disabled },
  {
    title: 'WebhookEndpointBody',
    additionalProperties: false,
    description: 'The complete writable representation of a webhook endpoint.',
  },
);
export type WebhookEndpointBody = Static<typeof WebhookEndpointBody>;

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    enabledEvents: EnabledEvents,
    apiVersion: Type.Optional(ApiVersion),
    description: Type.Optional(Description),
    disabled: Type.Optional(Type.Boolean({ description: 'Defaults to false.' })),
  },
  { title: 'CreateWebhookEndpointBody', additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const RedeliveryBody = Type.Object(
  {
    eventId: Type.String({
      pattern: EVENT_ID_PATTERN,
      maxLength: 26,
      description: 'The event to send again (GET /events, or a delivery of the log).',
    }),
  },
  { title: 'RedeliveryBody', additionalProperties: false },
);

export const ListWebhookEndpointsQuery = Type.Object(
  {
    disabled: Type.Optional(Type.Boolean({ description: 'Only disabled (true) or enabled (false) endpoints.' })),
    sort: Type.Optional(
      SortParam(WEBHOOK_ENDPOINT_SORT_KEYS, 'Comma-separated keys from createdAt, id; "-" for descending. Default id.', '-createdAt'),
    ),
    ...PageParams,
  },
  { additionalProperties: false },
);

export const ListDeliveriesQuery = Type.Object(
  {
    state: Type.Optional(DeliveryStateSchema),
    eventId: Type.Optional(Type.String({ pattern: EVENT_ID_PATTERN, maxLength: 26, description: 'Only the deliveries of this event.' })),
    ...PageParams,
  },
  { additionalProperties: false },
);

export const WebhookEndpointIdParams = Type.Object(
  { webhookEndpointId: Id('Identifier of the webhook endpoint.') },
  { additionalProperties: false },
);

export const DeliveryIdParams = Type.Object(
  { webhookEndpointId: Id('Identifier of the webhook endpoint.'), deliveryId: Id('Identifier of the delivery.') },
  { additionalProperties: false },
);
