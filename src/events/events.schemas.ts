// The Event resource and the request schemas of the event log's routes. An event carries one of
// several resources; their $refs name the latest version's schemas here and each older version's
// where the app registers Event per version (resourceSchemaAt in src/app.ts), so /v1/openapi.json's
// Event carries v1's Order and /v2's carries v2's.
import { Type, type TSchema } from 'typebox';
import { Id, PageParams, Timestamp } from '../http/schemas.ts';
import { EVENT_OBJECT_TYPES, EVENT_TYPE_NAMES, type EventObjectType } from './events.rules.ts';

/** evt_ and 128 random bits in base64url (events.store.ts newEventId). */
const EVENT_ID_PATTERN = '^evt_[A-Za-z0-9_-]{22}$';

const EventId = (description: string) => Type.String({ pattern: EVENT_ID_PATTERN, maxLength: 26, description });

export const EventTypeSchema = Type.Unsafe<string>({
  type: 'string',
  enum: [...EVENT_TYPE_NAMES],
  description: 'What happened, `<resource>.<change>`: the list is in docs/webhooks.md, "Event types".',
});

/** The resource schema each object type is, by $id. */
const EVENT_OBJECT_SCHEMAS: Record<EventObjectType, string> = {
  order: 'Order',
  payment: 'Payment',
  refund: 'Refund',
  product: 'Product',
  webhook_endpoint: 'WebhookEndpoint',
};

const EventObject = Type.Union(
  Object.values(EVENT_OBJECT_SCHEMAS).map((id): TSchema => Type.Ref(id)),
  {
    description:
      "The resource the event is about, as it was when the change committed, in the API version of the reader (the request's for GET /events): an order for order.*, a payment for payment.*, a refund for refund.*, a product for product.*, a webhook endpoint (never its secret) for webhook_endpoint.*.",
  },
);

// RFC 6749 Appendix A.1: a client_id is printable ASCII (VSCHAR).
const ClientId = Type.String({
  pattern: '^[\\x21-\\x7E]+$',
  minLength: 1,
  maxLength: 200,
  description: 'The OAuth client (an app, a service) the change came through.',
});

/** src/core/actor.ts: who made a change. */
const EventActor = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('user'),
        userId: Id('The user who made the change (staff, or the customer).'),
        clientId: ClientId,
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('client'), clientId: ClientId }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('system') }, { additionalProperties: false }),
    Type.Null(),
  ],
  {
    description:
      "Who made the change: a user through an app (`user`), a client acting for itself (`client`), or orderpay on its own (`system`: a payment flagged for attention, a webhook endpoint disabled after its failures or at its version's sunset). A payment's or refund's outcome names who asked for it, whoever recorded it (the request, the completer, the processor's notification). Null for events recorded before actors were (docs/webhooks.md, \"Who made a change\").",
  },
);

export const Event = Type.Object(
  {
    id: EventId('Identifier of the event; also the `webhook-id` of its webhook deliveries.'),
    type: EventTypeSchema,
    createdAt: Timestamp("When the change happened (its transaction, the same instant as the resource's updatedAt)."),
    livemode: Type.Boolean({
      description:
        "False where the deployment's payment processor moves no real money (the simulator; Stripe test keys), as Stripe's events say.",
    }),
    actor: EventActor,
    data: Type.Object({ object: EventObject }, { additionalProperties: false }),
  },
  {
    $id: 'Event',
    additionalProperties: false,
    description:
      'A change to a resource, recorded in the transaction that made it: a change that rolled back has no event, one that committed always has one. Kept ORDERPAY_EVENTS_RETENTION_DAYS days (30 by default).',
  },
);

export const ListEventsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({
        pattern: '^[a-z_]+\\.[a-z_]+(,[a-z_]+\\.[a-z_]+)*$',
        maxLength: 1000,
        description:
          'Only events of these types, separated by commas (docs/webhooks.md, "Event types"): types this API version shows; an unknown type, or one of a later version, is a 400.',
        examples: ['order.paid,order.cancelled'],
      }),
    ),
    objectType: Type.Optional(
      Type.Unsafe<EventObjectType>({
        type: 'string',
        enum: [...EVENT_OBJECT_TYPES],
        description:
          'Only events about resources of this kind: order (order.*), payment (payment.*), refund (refund.*), product (product.*) or webhook_endpoint (webhook_endpoint.*).',
        examples: ['order'],
      }),
    ),
    objectId: Type.Optional(
      Id(
        "Only events about the resource of this id, of the kind objectType names (which it requires): an order's, a payment's or a refund's history.",
      ),
    ),
    minCreatedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description: 'Only events created at or after this instant (RFC 3339, with its offset).',
        examples: ['2026-11-22T00:00:00Z'],
      }),
    ),
    maxCreatedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description:
          "Only events created at or before this instant (RFC 3339, with its offset). Fixing it to the first page's time keeps later pages from shifting as new events arrive.",
        examples: ['2026-11-22T23:59:59.999Z'],
      }),
    ),
    ...PageParams,
  },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ eventId: EventId('Identifier of the event.') }, { additionalProperties: false });
