// Routes of the event log: validate, check scope, call the service, answer with each event's
// object rendered in the request's API version by the renderer buildApp passes in.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { pageOf } from '../core/paging.ts';
import { requireScope } from '../http/authenticate.ts';
import { CACHE_NONE, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, problems } from '../http/schemas.ts';
import { eventRepresentation, type RenderEventObject } from './events.representation.ts';
import { EventIdParams, ListEventsQuery } from './events.schemas.ts';
import { getEvent, listEvents } from './events.service.ts';
import type { EventRecord } from './events.store.ts';

export interface EventsRoutesOptions {
  /** A stored event object → the resource as an API version shows it (src/event-objects.ts). */
  renderEventObject: RenderEventObject;
  /** Whether the deployment's payment processor moves real money. */
  livemode: boolean;
}

const EventRef = Type.Ref('Event');
const security = [{ bearer: ['events:read'] }];
// Events carry every customer's orders and payments: no cache may keep them (the spec's caching rule 1).
const noStore = { cacheControl: CACHE_NONE };

export async function eventsRoutes(parent: FastifyInstance, { renderEventObject, livemode }: EventsRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/events',
    {
      schema: {
        tags: ['events'],
        operationId: 'listEvents',
        summary: 'List events',
        security,
        description:
          'The event log, newest first (events of one transaction in the reverse of the order they were recorded). Staff users and service clients with events:read; a customer gets 403. Filters combine; every unknown parameter is a 400.',
        querystring: ListEventsQuery,
        response: { 200: Envelope(EventRef, 'A page of events, newest first.'), ...problems(400, 401, 403, 406) },
      },
    },
    async function listEventsRoute(request, reply) {
      const principal = requireScope(request, 'events:read');
      const events = await listEvents(await app.collectionReader(request), principal, {
        ...request.query,
        page: pageOf(request.query, app.cursors),
        apiVersion: request.apiVersion,
      });
      const represent = (event: EventRecord) => eventRepresentation(event, request.apiVersion, renderEventObject, livemode);
      return sendPage(request, reply, events, represent, noStore);
    },
  );

  app.get(
    '/events/:eventId',
    {
      schema: {
        tags: ['events'],
        operationId: 'getEvent',
        summary: 'Get an event',
        security,
        description:
          'One event, its object in the API version of the request. Staff users and service clients with events:read; a customer gets 403. An event past its retention is gone (404).',
        params: EventIdParams,
        response: { 200: EventRef, ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getEventRoute(request, reply) {
      const principal = requireScope(request, 'events:read');
      const event = await getEvent(app.db, principal, request.params.eventId, request.apiVersion);
      return sendRepresentation(request, reply, 200, eventRepresentation(event, request.apiVersion, renderEventObject, livemode), noStore);
    },
  );
}
