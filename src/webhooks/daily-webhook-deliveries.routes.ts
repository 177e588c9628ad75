// GET /daily-webhook-deliveries: webhook deliveries per UTC day and endpoint by state, for charts
// of delivery success (docs/api.md, "Daily reports"); the backlog now is each endpoint's own.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.ts';
import { requireScope } from '../http/authenticate.ts';
import { CACHE_NONE, sendRepresentation } from '../http/representation.ts';
import { Day, DayRangeQuery, Id, problems, REPORT_LIMITS, ReportEnvelope } from '../http/schemas.ts';
import { dailyWebhookDeliveries } from './delivery-log.service.ts';

const Count = (description: string) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

export const DailyWebhookDelivery = Type.Object(
  {
    day: Day('The day (UTC) the deliveries were made: their event, a redelivery or a ping.'),
    endpointId: Id('The webhook endpoint delivered to.'),
    deliveries: Count('Deliveries of that day to the endpoint.'),
    succeeded: Count('Of them, those the endpoint acknowledged (a 2xx).'),
    failed: Count('Of them, those that failed every attempt of the retry schedule (or whose endpoint was disabled).'),
    pending: Count('Of them, those still waiting for an attempt: the part of the backlog that day made.'),
    attempts: Count('Attempts made for them: more than deliveries where retries were needed.'),
  },
  {
    $id: 'DailyWebhookDelivery',
    additionalProperties: false,
    description: 'The deliveries made on one UTC day to one endpoint, by their state now.',
  },
);

export async function dailyWebhookDeliveriesRoutes(parent: FastifyInstance, { now }: { now: Clock }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/daily-webhook-deliveries',
    {
      schema: {
        tags: ['webhooks'],
        operationId: 'listDailyWebhookDeliveries',
        summary: 'List webhook deliveries per day',
        security: [{ bearer: ['webhooks:read'] }],
        description: `Webhook deliveries per UTC day and endpoint, days in order, then endpoints: how many, and how many succeeded, failed or are pending, with their attempts. A day with no delivery to an endpoint has no row. Staff users and service clients only. Deliveries are kept as long as their events. ${REPORT_LIMITS}`,
        querystring: DayRangeQuery(),
        response: {
          200: ReportEnvelope(Type.Ref('DailyWebhookDelivery'), 'Webhook deliveries per day and endpoint.'),
          ...problems(400, 401, 403, 406),
        },
      },
    },
    async function listDailyWebhookDeliveriesRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:read');
      const report = await dailyWebhookDeliveries(await app.collectionReader(request), principal, request.query, now());
      return sendRepresentation(request, reply, 200, { data: report.rows, meta: report.range }, { cacheControl: CACHE_NONE });
    },
  );
}
