// v3: payments and refunds show their lifecycle. A payment can be processing, wait for the
// customer (requires_action, with nextAction) or end canceled; a refund is pending, succeeded or
// failed; events tell each step. Before v3 a version showed only what the processor had decided
// (docs/payments.md, "Versions"): a payment or refund in progress is not there for it, a canceled
// payment is declined, and a processor's own decline code is card_declined.
import { Type, type TSchema } from 'typebox';
import { showsEventType } from '../../core/event-versions.ts';
import { type JsonObject, reshape, type VersionChange, without } from './version-change.ts';

/** The statuses of a decided payment as v2 shows them (canceled as declined). */
const DECIDED = ['succeeded', 'declined', 'partially_refunded', 'refunded'];
/** What v2 shows at all: a canceled payment is shown, as declined. */
const SHOWN_BEFORE = [...DECIDED, 'canceled'];
/** The decline codes v1 and v2 know; any other is card_declined there. */
const DECLINE_CODES = ['card_declined', 'insufficient_funds', 'expired_card'];
const NEW_PAYMENT_FIELDS = [
  'cancellationReason',
  'nextAction',
  'actionExpiresAt',
  'paymentMethod',
  'returnUrl',
  'livemode',
  'needsAttention',
];

/** The status field, and a nullable string field, as v2 knew them: closed lists. */
const statusBefore = (status: TSchema) =>
  ({
    ...status,
    enum: DECIDED,
    description: 'succeeded → partially_refunded → refunded; declined is final. See docs/payments.md.',
  }) as TSchema;
const declineCodeBefore = (declineCode: TSchema) =>
  Type.Union([Type.Unsafe<string>({ type: 'string', enum: DECLINE_CODES }), Type.Null()], {
    description: (declineCode as { description?: string }).description,
  });

/** A representation without some of its members. */
const omit = (body: JsonObject, names: readonly string[]): JsonObject =>
  Object.fromEntries(Object.entries(body).filter(([name]) => !names.includes(name)));

function paymentBefore(body: JsonObject): JsonObject {
  // A copy, whose members are then set in their places.
  const before = omit(body, NEW_PAYMENT_FIELDS) as JsonObject & { status: string; declineCode: string | null };
  // Canceled before any money moved: over, as a declined payment is.
  if (before.status === 'canceled') {
    before.status = 'declined';
    before.declineCode = 'card_declined';
  } else if (before.declineCode !== null && !DECLINE_CODES.includes(before.declineCode)) {
    before.declineCode = 'card_declined';
  }
  return before;
}

export const paymentLifecycle: VersionChange = {
  version: 3,
  description:
    "Payments show their lifecycle: `status` can be `processing`, `requires_action` (the customer must act: `nextAction`, until `actionExpiresAt`) or `canceled` (`cancellationReason`), beside `succeeded`, `declined`, `partially_refunded` and `refunded`; `POST /payments` answers 201 with the payment as it stands once the processor answered (or did not), and takes `paymentMethod` and `returnUrl`; `declineCode` is the processor's own; a payment says `livemode` and whether it `needsAttention`.",
  resources: {
    Payment: {
      schema: (newer) =>
        reshape(newer, (p) => ({
          ...without(p, NEW_PAYMENT_FIELDS),
          status: statusBefore(p.status!),
          declineCode: declineCodeBefore(p.declineCode!),
        })),
      downgrade: paymentBefore,
      shows: { status: SHOWN_BEFORE },
    },
  },
  requests: {
    CreatePaymentBody: {
      schema: (newer) => reshape(newer, (p) => without(p, ['paymentMethod', 'returnUrl'])),
      upgrade: (body) => body,
    },
  },
};

export const refundLifecycle: VersionChange = {
  version: 3,
  description:
    'Refunds show their lifecycle: `status` is `pending`, `succeeded` or `failed` (`failureReason`, the amount given back to the balance), with `updatedAt`. Before v3 a refund shows once it succeeded, and a refund that failed answers 422 `PAYMENT_REFUND_FAILED`.',
  resources: {
    Refund: {
      schema: (newer) => reshape(newer, (p) => without(p, ['status', 'failureReason', 'updatedAt'])),
      downgrade: (body) => omit(body, ['status', 'failureReason', 'updatedAt']),
      shows: { status: ['succeeded'] },
    },
  },
  requests: {},
};

export const lifecycleEvents: VersionChange = {
  version: 3,
  description:
    'Events of the lifecycle: `payment.requires_action`, `payment.canceled`, `payment.needs_attention` and `refund.failed`; an event says `livemode`. Readers and webhook endpoints of earlier versions neither list nor receive them.',
  resources: {
    Event: {
      schema: (newer) =>
        reshape(newer, (p) => {
          const type = p.type as TSchema & { enum: string[] };
          return { ...without(p, ['livemode']), type: { ...type, enum: type.enum.filter((name) => showsEventType(name, 2)) } as TSchema };
        }),
      downgrade: (body) => omit(body, ['livemode']),
    },
  },
  requests: {},
};
