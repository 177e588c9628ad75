// Routes of webhook endpoints: register, read, replace, delete, rotate the signing secret. Staff
// users and service clients, with webhooks:read or webhooks:write (docs/api.md, "Webhook endpoints").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { pageOf } from '../core/paging.ts';
import { requireScope } from '../http/authenticate.ts';
import { noneMatch } from '../http/etag.ts';
import { CACHE_NONE, resourceUrl, sendNotModified, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, IfMatchHeaders, IfNoneMatchHeaders, problems } from '../http/schemas.ts';
import {
  endpointsShownTo,
  webhookEndpointEtag,
  webhookEndpointIfMatch,
  webhookEndpointRepresentation,
  webhookEndpointWithSecretRepresentation,
} from './endpoints.representation.ts';
import { CreateWebhookEndpointBody, ListWebhookEndpointsQuery, WebhookEndpointBody, WebhookEndpointIdParams } from './endpoints.schemas.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  replaceWebhookEndpoint,
  rotateSigningSecret,
  type WebhookEndpointContext,
} from './endpoints.service.ts';
import { createSecretBox } from './secrets.ts';

const EndpointRef = Type.Ref('WebhookEndpoint');
const EndpointWithSecretRef = Type.Ref('WebhookEndpointWithSecret');
const readSecurity = [{ bearer: ['webhooks:read'] }];
const writeSecurity = [{ bearer: ['webhooks:write'] }];
const tags = ['webhooks'];

export async function webhookEndpointsRoutes(
  parent: FastifyInstance,
  opts: { retiredVersions: WebhookEndpointContext['retiredVersions'] },
): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const context: WebhookEndpointContext = {
    secrets: createSecretBox(app.db, app.config.webhooks.secretKey),
    guard: { allowPrivate: app.config.webhooks.allowPrivate },
    retiredVersions: opts.retiredVersions,
  };

  app.post(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint (staff)',
        description:
          'Scope webhooks:write (staff users and service clients). The url must be https on a host that resolves to public addresses only; the apiVersion a version not retired (422). Answers 201 with Location, ETag and the endpoint with its signing secret: the only answer that ever shows it.',
        security: writeSecurity,
        body: CreateWebhookEndpointBody,
        response: { 201: EndpointWithSecretRef, ...problems(400, 401, 403, 406, 413, 415, 422) },
      },
    },
    async function createWebhookEndpointRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      const made = await createWebhookEndpoint(app.db, context, principal, request.body);
      return sendRepresentation(request, reply, 201, webhookEndpointWithSecretRepresentation(made), {
        etag: webhookEndpointEtag(made.endpoint, request.apiVersion),
        location: resourceUrl(request, `/webhook-endpoints/${made.endpoint.id}`),
      });
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints (staff)',
        description:
          'Scope webhooks:read (staff users and service clients). Filter by `disabled`; sort by createdAt or id. No secrets. Each endpoint with its health: last success and backlog, as of the read (Cache-Control: no-store).',
        security: readSecurity,
        querystring: ListWebhookEndpointsQuery,
        response: { 200: Envelope(EndpointRef, 'A page of webhook endpoints.'), ...problems(400, 401, 403, 406) },
      },
    },
    async function listWebhookEndpointsRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:read');
      const endpoints = await listWebhookEndpoints(await app.collectionReader(request), principal, {
        disabled: request.query.disabled,
        sort: request.query.sort,
        page: pageOf(request.query, app.cursors),
        shownTo: endpointsShownTo(request),
      });
      return sendPage(request, reply, endpoints, webhookEndpointRepresentation, { cacheControl: CACHE_NONE });
    },
  );

  app.get(
    '/webhook-endpoints/:webhookEndpointId',
    {
      schema: {
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint (staff)',
        description:
          "Scope webhooks:read. Never shows the signing secret. Its health (lastSucceededAt, backlog) is as of the read, and answered Cache-Control: no-store. The strong ETag is the endpoint's revision, which those figures do not change: with a matching If-None-Match the answer is 304 without a body, saying the settings are unchanged.",
        security: readSecurity,
        params: WebhookEndpointIdParams,
        headers: IfNoneMatchHeaders,
        response: { 200: EndpointRef, 304: Type.Null({ description: 'Not modified.' }), ...problems(400, 401, 403, 404, 406) },
      },
    },
    async function getWebhookEndpointRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:read');
      const endpoint = await getWebhookEndpoint(app.db, principal, request.params.webhookEndpointId, endpointsShownTo(request));
      const etag = webhookEndpointEtag(endpoint, request.apiVersion);
      if (noneMatch(request.headers['if-none-match'], etag)) return sendNotModified(reply, etag, CACHE_NONE);
      return sendRepresentation(request, reply, 200, webhookEndpointRepresentation(endpoint), { etag, cacheControl: CACHE_NONE });
    },
  );

  app.put(
    '/webhook-endpoints/:webhookEndpointId',
    {
      schema: {
        tags,
        operationId: 'replaceWebhookEndpoint',
        summary: 'Replace a webhook endpoint (staff)',
        description:
          'Scope webhooks:write. Complete replacement of url, enabledEvents, apiVersion, description and disabled; the url is checked again. An endpoint pinned to a retired API version is enabled only by pinning it to a later one (422). The same body again changes nothing. If-Match honoured (strong comparison) against the revision, which deliveries do not change. The secret is kept: rotate it apart.',
        security: writeSecurity,
        params: WebhookEndpointIdParams,
        headers: IfMatchHeaders,
        body: WebhookEndpointBody,
        response: { 200: EndpointRef, ...problems(400, 401, 403, 404, 406, 412, 413, 415, 422) },
      },
    },
    async function replaceWebhookEndpointRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      const endpoint = await replaceWebhookEndpoint(app.db, context, principal, {
        ...request.body,
        id: request.params.webhookEndpointId,
        shownTo: endpointsShownTo(request),
        precondition: webhookEndpointIfMatch(request.headers['if-match'], request.apiVersion),
      });
      return sendRepresentation(request, reply, 200, webhookEndpointRepresentation(endpoint), {
        etag: webhookEndpointEtag(endpoint, request.apiVersion),
      });
    },
  );

  app.delete(
    '/webhook-endpoints/:webhookEndpointId',
    {
      schema: {
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint (staff)',
        description:
          'Scope webhooks:write. Deletes the endpoint, its secrets and its delivery log; deliveries still pending are never sent. Nothing remains, so deleting it again answers 404. If-Match honoured.',
        security: writeSecurity,
        params: WebhookEndpointIdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(400, 401, 403, 404, 406, 412) },
      },
    },
    async function deleteWebhookEndpointRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      await deleteWebhookEndpoint(app.db, principal, {
        id: request.params.webhookEndpointId,
        shownTo: endpointsShownTo(request),
        precondition: webhookEndpointIfMatch(request.headers['if-match'], request.apiVersion),
      });
      return reply.code(204).header('cache-control', 'no-store').send(null);
    },
  );

  app.post(
    '/webhook-endpoints/:webhookEndpointId/secret-rotations',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookEndpointSecret',
        summary: "Rotate a webhook endpoint's signing secret (staff)",
        description:
          'Scope webhooks:write. A new signing secret, in this answer only; for 24 hours (previousSecretExpiresAt) deliveries carry a signature by each, so the receiver can switch without missing one. A second rotation within the 24 hours retires the oldest secret at once.',
        security: writeSecurity,
        params: WebhookEndpointIdParams,
        response: { 200: EndpointWithSecretRef, ...problems(400, 401, 403, 404, 406, 413, 415) },
      },
    },
    async function rotateWebhookEndpointSecretRoute(request, reply) {
      const principal = requireScope(request, 'webhooks:write');
      const rotated = await rotateSigningSecret(app.db, context, principal, request.params.webhookEndpointId, endpointsShownTo(request));
      return sendRepresentation(request, reply, 200, webhookEndpointWithSecretRepresentation(rotated));
    },
  );
}
