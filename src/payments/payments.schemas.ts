// Payment and refund representations and the request schemas of their routes.
import { Type, type Static, type TSchema } from 'typebox';
import { Id, Money, MoneyOf, PageParams, Timestamp, SortParam } from '../http/schemas.ts';
import {
  CANCELLATION_REASONS,
  MAX_PAYMENT_AMOUNT,
  PAYMENT_SORT_KEYS,
  PAYMENT_STATUSES,
  type PaymentStatus,
  REFUND_STATUSES,
  type RefundStatus,
} from './payments.rules.ts';

export const PaymentStatusSchema = Type.Unsafe<PaymentStatus>({
  type: 'string',
  enum: [...PAYMENT_STATUSES],
  description:
    'processing → succeeded or declined, or requires_action (the customer must act: nextAction) → succeeded, declined or canceled; succeeded → partially_refunded → refunded. declined and canceled are final, nothing charged. See docs/payments.md.',
});

const RefundStatusSchema = Type.Unsafe<RefundStatus>({
  type: 'string',
  enum: [...REFUND_STATUSES],
  description: 'pending → succeeded, or failed (its amount counts as not refunded again).',
});

/** What the customer must do before the processor decides (3-D Secure). */
const NextAction = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('redirect_to_url', {
          description: "Send the customer's browser to url; it comes back to the payment's returnUrl.",
        }),
        url: Type.String({
          format: 'uri',
          maxLength: 4096,
          description: 'Where the customer authenticates (the card issuer or the processor).',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('use_processor_sdk', {
          description: "Hand clientSecret to the processor's library in the browser (Stripe.js: handleNextAction).",
        }),
        processor: Type.String({
          maxLength: 64,
          pattern: '^[a-z0-9_]+$',
          description: 'The processor whose library handles it, e.g. stripe.',
        }),
        clientSecret: Type.String({
          maxLength: 512,
          pattern: '^[A-Za-z0-9_]+$',
          description: "The processor's client secret of the charge: for the paying customer's browser only.",
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'What the customer must do before the processor decides; null unless status is requires_action.' },
);

const Amount = (description: string) =>
  Type.Integer({
    format: 'int64',
    minimum: 1,
    maximum: MAX_PAYMENT_AMOUNT,
    description: `${description} Integer count of minor units (cents for EUR/USD, yen for JPY), 1–${MAX_PAYMENT_AMOUNT}.`,
  });

const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options);

export const DeclineCode = Nullable(Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_]+$' }), {
  description: "Why the processor declined the payment, in its own code (Stripe's decline_code); null unless status is declined.",
});

export const Payment = Type.Object(
  {
    id: Id('Identifier of the payment.'),
    status: PaymentStatusSchema,
    amount: MoneyOf(Amount('Amount charged.'), 'Amount charged.'),
    amountRefunded: MoneyOf(Money('Sum of the refunds so far.'), "Sum of the refunds so far, in the payment's currency."),
    orderId: Nullable(Id('The order this payment paid, or null.')),
    customerId: Nullable(Id('The user the payment belongs to; null when a service client paid without an order.')),
    declineCode: DeclineCode,
    cancellationReason: Nullable(Type.Unsafe<string>({ type: 'string', enum: [...CANCELLATION_REASONS] }), {
      description:
        'Why the payment was canceled, nothing charged: action_expired (the customer did not complete the action in time), processor_unavailable (the processor never answered through the retry schedule); null unless status is canceled.',
    }),
    nextAction: Nullable(NextAction, {
      description: 'What the customer must do before the processor decides; null unless status is requires_action.',
    }),
    actionExpiresAt: Nullable(Timestamp('Until when the customer may act.'), {
      description: 'Until when the customer may act; then the payment is canceled. Null unless status is requires_action.',
    }),
    paymentMethod: Nullable(Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_]+$' }), {
      description: "The processor's payment method the payment was asked with, if any.",
    }),
    returnUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048 }), {
      description: "Where the customer's browser comes back after an action, as the payment was asked with.",
    }),
    livemode: Type.Boolean({ description: 'False when the processor moves no real money (the simulator; Stripe test keys).' }),
    needsAttention: Nullable(
      Type.Object(
        { since: Timestamp('Since when.'), reason: Type.String({ maxLength: 1000, description: 'Why, for a person.' }) },
        { additionalProperties: false },
      ),
      {
        description:
          'Set when the payment needs a person (the processor has not answered about it through the retry schedule); null otherwise.',
      },
    ),
    createdAt: Timestamp('When the payment was made.'),
    updatedAt: Timestamp('When the payment last changed (its outcome, a refund).'),
  },
  { $id: 'Payment', additionalProperties: false },
);
export type Payment = Static<typeof Payment>;

export const Refund = Type.Object(
  {
    id: Id('Identifier of the refund.'),
    paymentId: Id('The payment refunded.'),
    status: RefundStatusSchema,
    amount: MoneyOf(Amount('Amount given back.'), "Amount given back, in the payment's currency."),
    failureReason: Nullable(Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_]+$' }), {
      description: 'Why the processor could not make the refund; null unless status is failed.',
    }),
    createdAt: Timestamp('When the refund was made.'),
    updatedAt: Timestamp('When the refund last changed (its outcome).'),
  },
  { $id: 'Refund', additionalProperties: false },
);
export type Refund = Static<typeof Refund>;

export const CreatePaymentBody = Type.Object(
  {
    amount: MoneyOf(Amount('Amount to charge.'), 'Amount to charge.'),
    orderId: Type.Optional(
      Id('An order to pay: it must be pending, and amount and currency must equal its total. On success it becomes paid.'),
    ),
    paymentMethod: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_]{1,255}$',
        maxLength: 255,
        description:
          "The processor's payment method to charge (Stripe: a pm_… id, e.g. from Stripe.js); required by processors that need one (Stripe), optional for the simulator.",
        examples: ['pm_card_visa'],
      }),
    ),
    returnUrl: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description: "Where the customer's browser comes back after an action the payment requires (a 3-D Secure redirect).",
        examples: ['https://shop.example.com/checkout/done'],
      }),
    ),
  },
  { title: 'CreatePaymentBody', additionalProperties: false },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

export const CreateRefundBody = Type.Object(
  {
    amount: Type.Optional(
      MoneyOf(
        Amount('Amount to give back; omitted, all that is left.'),
        "Amount to give back, in the payment's currency; omitted, all that is left.",
      ),
    ),
  },
  { title: 'CreateRefundBody', additionalProperties: false },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const ListPaymentsQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatusSchema),
    orderId: Type.Optional(Id('Only payments of this order.')),
    needsAttention: Type.Optional(
      Type.Boolean({
        description:
          'true: only payments flagged for a person (a processor that never answered; see docs/payments.md, "Payments that need a person"); false: only the others.',
      }),
    ),
    sort: Type.Optional(
      SortParam(
        PAYMENT_SORT_KEYS,
        'Comma-separated keys from createdAt, id; "-" prefix for descending. Default createdAt. id is always the last tie-breaker.',
        '-createdAt',
      ),
    ),
    ...PageParams,
  },
  { additionalProperties: false },
);
export type ListPaymentsQuery = Static<typeof ListPaymentsQuery>;

export const ListRefundsQuery = Type.Object(PageParams, { additionalProperties: false });
export type ListRefundsQuery = Static<typeof ListRefundsQuery>;

export const PaymentIdParams = Type.Object({ paymentId: Id('Identifier of the payment.') }, { additionalProperties: false });
export const RefundIdParams = Type.Object(
  { paymentId: Id('Identifier of the payment.'), refundId: Id('Identifier of the refund.') },
  { additionalProperties: false },
);
