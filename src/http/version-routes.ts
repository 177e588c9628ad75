// A route written in the latest version's terms, reshaped into one version's: its response schemas
// name that version's resources, its body schema is that version's (upgraded to the latest before
// the handler), its successes are downgraded to that version on the way out. A route says what it
// represents through its schemas alone: the response's $ref (a resource), the body's title (a request).
import type { FastifyRequest, RouteOptions } from 'fastify';
import type { TObject, TSchema } from 'typebox';
import { LATEST_API_VERSION } from '../core/api-versions.ts';
import { downgrade, isVersioned, requestSchemaAt, upgradeRequest, versionedSchemaId } from './versions/versions.ts';
import type { JsonObject } from './versions/version-change.ts';

/** What an onRoute hook recorded of a route: the resource each success status represents, the body it takes. */
export interface VersionedRouteConfig {
  /** status → resource name, and whether the body is a collection envelope of it. */
  represents?: Record<string, { resource: string; collection: boolean }>;
  /** The title of the latest body schema when a version change reshapes it. */
  requestBody?: string;
}

function refName(schema: unknown): string | undefined {
  const ref = (schema as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' ? ref : undefined;
}

/** The resource a response schema represents: a $ref to it, or an envelope whose data are. */
function representedResource(schema: TSchema): { resource: string; collection: boolean } | undefined {
  const single = refName(schema);
  if (single) return { resource: single, collection: false };
  const data = (schema as { properties?: { data?: { items?: unknown } } }).properties?.data?.items;
  const item = refName(data);
  return item ? { resource: item, collection: true } : undefined;
}

/** A copy of a response schema whose $refs to resources point at the version's schemas. */
function responseSchemaAt(schema: TSchema, version: number): TSchema {
  if (version === LATEST_API_VERSION) return schema;
  const single = refName(schema);
  if (single) return { ...schema, $ref: versionedSchemaId(single, version) } as TSchema;
  const envelope = schema as TObject & { properties: { data?: TSchema & { items?: TSchema } } };
  const data = envelope.properties?.data;
  const item = refName(data?.items);
  if (!data || !item) return schema;
  return {
    ...envelope,
    properties: { ...envelope.properties, data: { ...data, items: { ...data.items, $ref: versionedSchemaId(item, version) } } },
  } as TSchema;
}

/** Reshapes a route as registered (latest schemas) into the version's: schemas, constraint, hooks. */
export function versionRoute(scope: { version: number; negotiated: boolean }, route: RouteOptions): void {
  const { version } = scope;
  const schema = { ...route.schema } as NonNullable<RouteOptions['schema']> & { body?: TObject; response?: Record<string, TSchema> };
  const config: VersionedRouteConfig = {};
  if (schema.response) {
    const represents: VersionedRouteConfig['represents'] = {};
    const response: Record<string, TSchema> = {};
    for (const [status, body] of Object.entries(schema.response)) {
      const resource = Number(status) < 300 ? representedResource(body) : undefined;
      if (resource && isVersioned(resource.resource)) represents[status] = resource;
      response[status] = Number(status) < 300 ? responseSchemaAt(body, version) : body;
    }
    schema.response = response;
    if (Object.keys(represents).length > 0 && version !== LATEST_API_VERSION) config.represents = represents;
  }
  const title = (schema.body as { title?: unknown } | undefined)?.title;
  if (schema.body && typeof title === 'string' && isVersioned(title) && version !== LATEST_API_VERSION) {
    schema.body = requestSchemaAt(schema.body, version);
    config.requestBody = title;
    route.preHandler = [upgradeBody, ...toArray(route.preHandler)];
  }
  if (scope.negotiated) {
    // The OpenAPI documents describe /v<N>; the unversioned paths serve the same operations.
    schema.hide = true;
    route.constraints = { ...route.constraints, apiVersion: String(version) };
  }
  route.schema = schema;
  route.config = { ...route.config, ...config };
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** preHandler of an older version's route: the validated body, upgraded to the latest version. */
async function upgradeBody(request: FastifyRequest): Promise<void> {
  const name = request.routeOptions.config.requestBody;
  if (!name || request.body === null || typeof request.body !== 'object') return;
  request.sentBody = request.body;
  request.body = upgradeRequest(name, request.body as JsonObject, request.apiVersion);
  request.upgradedBody = name;
}

/**
 * A successful body in the latest version → the request's version, for the status's resource.
 * The latest version and bodies that represent no versioned resource pass unchanged.
 */
export function representAtVersion<T>(request: FastifyRequest, status: number, body: T): T {
  const represents = request.routeOptions.config.represents?.[status];
  if (!represents || body === null || typeof body !== 'object') return body;
  const { resource, collection } = represents;
  const version = request.apiVersion;
  if (!collection) return downgrade(resource, body as JsonObject, version) as T;
  const envelope = body as unknown as { data: JsonObject[] };
  return { ...envelope, data: envelope.data.map((item) => downgrade(resource, item, version)) } as T;
}

/** The request body as the client sent it, before any upgrade to the latest version. */
export function sentBody(request: FastifyRequest): Record<string, unknown> {
  return (request.sentBody ?? request.body) as Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body's name when it was upgraded from an older version (problem pointers map back). */
    upgradedBody: string | undefined;
    /** The body as sent, when upgradedBody says it was upgraded. */
    sentBody: unknown;
  }
  interface FastifyContextConfig extends VersionedRouteConfig {}
}
