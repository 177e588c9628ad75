// Payment and refund representations and the request schemas of their routes.
import { Type, type Static } from 'typebox';
import { Id, Money, MoneyOf, PageParams, Timestamp, SortParam } from '../http/schemas.ts';
import { DECLINE_CODES } from './processor.ts';
import { DECIDED_STATUSES, MAX_PAYMENT_AMOUNT, type PaymentStatus } from './payments.rules.ts';

export const PaymentStatusSchema = Type.Unsafe<PaymentStatus>({
  type: 'string',
  enum: [...DECIDED_STATUSES],
  description: 'succeeded → partially_refunded → refunded; declined is final. See docs/payments.md.',
});

const Amount = (description: string) =>
  Type.Integer({
    format: 'int64',
    minimum: 1,
    maximum: MAX_PAYMENT_AMOUNT,
    description: `${description} Integer count of minor units (cents for EUR/USD, yen for JPY), 1–${MAX_PAYMENT_AMOUNT}.`,
  });

const Nullable = <T extends ReturnType<typeof Id>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Payment = Type.Object(
  {
    id: Id('Identifier of the payment.'),
    status: PaymentStatusSchema,
    amount: MoneyOf(Amount('Amount charged.'), 'Amount charged.'),
    amountRefunded: MoneyOf(Money('Sum of the refunds so far.'), "Sum of the refunds so far, in the payment's currency."),
    orderId: Nullable(Id('The order this payment paid, or null.')),
    customerId: Nullable(Id('The user the payment belongs to; null when a service client paid without an order.')),
    declineCode: Type.Union([Type.Unsafe<string>({ type: 'string', enum: [...DECLINE_CODES] }), Type.Null()], {
      description: 'Why the processor declined the payment; null unless status is declined.',
    }),
    createdAt: Timestamp('When the payment was made.'),
    updatedAt: Timestamp('When the payment last changed (a refund).'),
  },
  { $id: 'Payment', additionalProperties: false },
);
export type Payment = Static<typeof Payment>;

export const Refund = Type.Object(
  {
    id: Id('Identifier of the refund.'),
    paymentId: Id('The payment refunded.'),
    amount: MoneyOf(Amount('Amount given back.'), "Amount given back, in the payment's currency."),
    createdAt: Timestamp('When the refund was made.'),
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
    sort: Type.Optional(
      SortParam(
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
