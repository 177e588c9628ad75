// Routes of an endpoint's delivery log: its deliveries with their attempts, an event sent again, a
// ping. Each answers for the endpoint in its path only (docs/api.md, "Webhook endpoints").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { pageOf } from '../core/paging.ts';
import { requireScope } from '../http/authenticate.ts';
import { resourceUrl, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, problems } from '../http/schemas.ts';
import {
  getDelivery,
  listDeliveries,
  pingWebhookEndpoint,
  redeliverEvent,
  type WebhookDeliveryWithAttempts,
} from './delivery-log.service.ts';
import { endpointsShownTo, webhookDeliveryRepresentation } from './endpoints.representation.ts';
import { DeliveryIdParams, ListDeliveriesQuery, RedeliveryBody, WebhookEndpointIdParams } from './endpoints.schemas.ts';

const DeliveryRef = Type.Ref('WebhookDelivery');
const readSecurity = [{ bearer: ['webhooks:read'] }];
const writeSecurity = [{ bearer: ['webhooks:write'] }];
const tags = ['webhooks'];

/** 202: the delivery is pending; the dispatcher sends it. Location is where to watch it. */
function sendAccepted(request: FastifyRequest, reply: FastifyReply, delivery: WebhookDeliveryWithAttempts): FastifyReply {
  return sendRepresentation(request, reply, 202, webhookDeliveryRepresentation(delivery), {
    location: resourceUrl(request, `/webhook-endpoints/${delivery.endpointId}/deliveries/${delivery.id}`),
  });
}

export async function deliveryLogRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/webhook-endpoints/:webhookEndpointId/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: "List a webhook endpoint's deliveries (staff)",
        description:
          'Scope webhooks:read. Newest first, each with its attempts embedded (status code, duration, error, the first 1 KiB of the response). Filter by `state` and `eventId`.',
        security: readSecurity,
        params: WebhookEndpointIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: Envelope(DeliveryRef, 'A page of deliveries, newest first.'), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function listWebhookDeliveriesRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:read');
      const deliveries = await listDeliveries(await app.collectionReader(request), principal, {
        endpointId: request.params.webhookEndpointId,
        state: request.query.state,
        eventId: request.query.eventId,
        page: pageOf(request.query, app.cursors),
        shownTo: endpointsShownTo(request),
      });
      return sendPage(request, reply, deliveries, webhookDeliveryRepresentation);
    },
  );

  app.get(
    '/webhook-endpoints/:webhookEndpointId/deliveries/:deliveryId',
    {
      schema: {
        tags,
        operationId: 'getWebhookDelivery',
        summary: 'Get a delivery of a webhook endpoint (staff)',
        description: 'Scope webhooks:read. A delivery with its attempts; one of another endpoint is a 404.',
        security: readSecurity,
        params: DeliveryIdParams,
        response: { 200: DeliveryRef, ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getWebhookDeliveryRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:read');
      const delivery = await getDelivery(
        app.db,
        principal,
        request.params.webhookEndpointId,
        request.params.deliveryId,
        endpointsShownTo(request),
      );
      return sendRepresentation(request, reply, 200, webhookDeliveryRepresentation(delivery));
    },
  );

  app.post(
    '/webhook-endpoints/:webhookEndpointId/deliveries',
    {
      schema: {
        tags,
        operationId: 'redeliverWebhookEvent',
        summary: 'Send an event to a webhook endpoint again (staff)',
        description:
          'Scope webhooks:write. A new pending delivery of the event to this endpoint, sent like any other (same webhook-id, so the receiver can tell a repeat). The endpoint must be enabled and subscribe to the event type, or have been sent the event before. Answers 202 with the delivery and its Location.',
        security: writeSecurity,
        params: WebhookEndpointIdParams,
        body: RedeliveryBody,
        response: { 202: DeliveryRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415, 422) },
      },
    },
    async function redeliverWebhookEventRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      return sendAccepted(
        request,
        reply,
        await redeliverEvent(app.db, principal, request.params.webhookEndpointId, request.body.eventId, endpointsShownTo(request)),
      );
    },
  );

  app.post(
    '/webhook-endpoints/:webhookEndpointId/pings',
    {
      schema: {
        tags,
        operationId: 'pingWebhookEndpoint',
        summary: 'Ping a webhook endpoint (staff)',
        description:
          'Scope webhooks:write. Records a webhook_endpoint.ping event (its object: the endpoint, without its secret) and a delivery of it to this endpoint only, signed and sent like any other. Answers 202 with the delivery and its Location.',
        security: writeSecurity,
        params: WebhookEndpointIdParams,
        response: { 202: DeliveryRef, ...problems(400, 401, 403, 404, 406, 409, 413, 415) },
      },
    },
    async function pingWebhookEndpointRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      return sendAccepted(
        request,
        reply,
        await pingWebhookEndpoint(app.db, principal, request.params.webhookEndpointId, endpointsShownTo(request)),
      );
    },
  );
}
