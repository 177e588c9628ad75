// Webhook endpoints and their deliveries as the API shows them: the record less its row version
// (and never a secret, except the one just made, beside it), with the backlog read beside it, and
// the endpoint's entity tag: its revision, which the live figures are not part of (decision 0118).
import type { Precondition } from '../core/precondition.ts';
import type { FastifyRequest } from 'fastify';
import { entityTag, ifMatchPrecondition } from '../http/etag.ts';
import { endpointVersionsShownTo } from '../core/event-versions.ts';
import type { WebhookDeliveryWithAttempts } from './delivery-log.service.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from './endpoints.schemas.ts';
import type { EndpointBacklog } from './backlog.store.ts';
import { shownDisabledReason } from './endpoints.rules.ts';
import type { WebhookEndpointRecord } from './endpoints.store.ts';

/** The latest API version an endpoint may be pinned to and still be there for the request. */
export function endpointsShownTo(request: FastifyRequest): number {
  return endpointVersionsShownTo(request.apiVersion);
}

/**
 * The endpoint as the API shows it. An event's record has no backlog (an event records settings,
 * not traffic), and one recorded before 0014 has neither a reason nor a last success.
 */
export function webhookEndpointRepresentation(record: WebhookEndpointRecord & { backlog?: EndpointBacklog }): WebhookEndpoint {
  return {
    id: record.id,
    url: record.url,
    enabledEvents: record.enabledEvents,
    apiVersion: record.apiVersion,
    description: record.description,
    disabled: record.disabled,
    disabledReason: shownDisabledReason(record),
    failingSince: record.failingSince,
    lastSucceededAt: record.lastSucceededAt ?? null,
    backlog: record.backlog ?? null,
    previousSecretExpiresAt: record.previousSecretExpiresAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The answer of a creation or a rotation: the endpoint and its new secret, shown this once. */
export function webhookEndpointWithSecretRepresentation(made: {
  endpoint: WebhookEndpointRecord & { backlog: EndpointBacklog };
  secret: string;
}): WebhookEndpointWithSecret {
  return { ...webhookEndpointRepresentation(made.endpoint), secret: made.secret };
}

export function webhookEndpointEtag(record: Pick<WebhookEndpointRecord, 'id' | 'version'>, apiVersion: number): string {
  return entityTag('webhookEndpoint', record.id, record.version, apiVersion);
}

/** If-Match on an endpoint, judged by the service on the locked row. */
export function webhookEndpointIfMatch(header: string | undefined, apiVersion: number): Precondition<WebhookEndpointRecord> | undefined {
  return ifMatchPrecondition<WebhookEndpointRecord>(header, (current) => webhookEndpointEtag(current, apiVersion));
}

export function webhookDeliveryRepresentation(delivery: WebhookDeliveryWithAttempts): WebhookDelivery {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    state: delivery.state,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: delivery.state === 'pending' ? delivery.nextAttemptAt : null,
    attempts: delivery.attempts.map((attempt) => ({
      attemptedAt: attempt.attemptedAt,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
      responseBody: attempt.responseBody,
    })),
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
}
