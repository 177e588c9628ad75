// GET /daily-payment-outcomes: payments per UTC day by status, decline code and currency, for
// charts of how payments go and why they are declined (docs/api.md, "Daily reports").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.ts';
import { requireScope } from '../http/authenticate.ts';
import { sendRepresentation } from '../http/representation.ts';
import { Day, DayRangeQuery, Money, MoneyOf, problems, REPORT_LIMITS, ReportEnvelope } from '../http/schemas.ts';
import { DeclineCode, PaymentStatusSchema } from './payments.schemas.ts';
import { dailyPaymentOutcomes } from './payments.service.ts';

export const DailyPaymentOutcome = Type.Object(
  {
    day: Day('The day (UTC) the payments were made.'),
    status: PaymentStatusSchema,
    declineCode: DeclineCode,
    payments: Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Payments of this day, status, decline code and currency.',
    }),
    amount: MoneyOf(Money('The sum of their amounts.'), 'The sum of their amounts.'),
    amountRefunded: MoneyOf(Money('The sum refunded of them so far.'), 'The sum refunded of them so far.'),
  },
  {
    $id: 'DailyPaymentOutcome',
    additionalProperties: false,
    description: 'The payments made on one UTC day with one status, decline code and currency, as they stand now.',
  },
);

export async function dailyPaymentOutcomesRoutes(parent: FastifyInstance, { now }: { now: Clock }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/daily-payment-outcomes',
    {
      schema: {
        tags: ['payments'],
        operationId: 'listDailyPaymentOutcomes',
        summary: 'List payment outcomes per day',
        security: [{ bearer: ['payments:read'] }],
        description: `Payments per UTC day of their creation, by status (as each stands now), decline code and currency: their count, amount and amount refunded. Days in order, then statuses, decline codes (null first) and currencies; a combination with no payment has no row. A customer reads their own payments, staff and service clients every one. ${REPORT_LIMITS}`,
        querystring: DayRangeQuery('Only payments in this currency.'),
        response: {
          200: ReportEnvelope(Type.Ref('DailyPaymentOutcome'), 'Payments per day, status, decline code and currency.'),
          ...problems(400, 401, 403, 406),
        },
      },
    },
    async function listDailyPaymentOutcomesRoute(request, reply) {
      const principal = requireScope(request, 'payments:read');
      const report = await dailyPaymentOutcomes(await app.collectionReader(request), principal, request.query, now());
      const data = report.rows.map((row) => ({
        day: row.day,
        status: row.status,
        declineCode: row.declineCode,
        payments: row.payments,
        amount: { value: row.amount, currency: row.currency },
        amountRefunded: { value: row.amountRefunded, currency: row.currency },
      }));
      return sendRepresentation(request, reply, 200, { data, meta: report.range });
    },
  );
}
