// GET /daily-order-totals: orders placed per UTC day and currency, for charts and reconciliation
// without paging through every order (docs/api.md, "Daily reports").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.ts';
import { requireScope } from '../http/authenticate.ts';
import { sendRepresentation } from '../http/representation.ts';
import { Day, DayRangeQuery, Money, MoneyOf, problems, REPORT_LIMITS, ReportEnvelope } from '../http/schemas.ts';
import { dailyOrderTotals } from './orders.service.ts';

export const DailyOrderTotal = Type.Object(
  {
    day: Day('The day (UTC) the orders were placed.'),
    orders: Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Orders placed that day in this currency.',
    }),
    total: MoneyOf(Money('The sum of their totals.'), 'The sum of their totals, whatever their status now.'),
  },
  {
    $id: 'DailyOrderTotal',
    additionalProperties: false,
    description: 'The orders placed on one UTC day in one currency (deleted orders are not counted).',
  },
);

export async function dailyOrderTotalsRoutes(parent: FastifyInstance, { now }: { now: Clock }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/daily-order-totals',
    {
      schema: {
        tags: ['orders'],
        operationId: 'listDailyOrderTotals',
        summary: 'List orders placed per day',
        security: [{ bearer: ['orders:read'] }],
        description: `Orders placed per UTC day and currency, days in order, then currencies: their count and the sum of their totals. A day with no order has no row. A customer reads their own orders, staff and service clients every one. ${REPORT_LIMITS}`,
        querystring: DayRangeQuery('Only orders in this currency.'),
        response: {
          200: ReportEnvelope(Type.Ref('DailyOrderTotal'), 'Orders placed per day and currency.'),
          ...problems(400, 401, 403, 406),
        },
      },
    },
    async function listDailyOrderTotalsRoute(request, reply) {
      const principal = requireScope(request, 'orders:read');
      const report = await dailyOrderTotals(await app.collectionReader(request), principal, request.query, now());
      const data = report.rows.map((row) => ({ day: row.day, orders: row.orders, total: { value: row.total, currency: row.currency } }));
      return sendRepresentation(request, reply, 200, { data, meta: report.range });
    },
  );
}
