// API versions at the edge. Every resource route is registered once per version: under /v<N>, and
// on the unversioned path with the route constraint apiVersion, which picks the version from the
// Accept media type application/vnd.orderpay.v<N>+json or else the calling client's pinned version
// (the access token's api_version claim; v1 without one). Handlers speak the latest version: an
// older version's request bodies are upgraded before the handler and its responses downgraded
// after it, through the version changes (./versions/). Deprecated versions carry their dates.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { TObject, TSchema } from 'typebox';
import { API_VERSION_NUMBERS, isApiVersion, LATEST_API_VERSION, UNPINNED_API_VERSION } from '../core/api-versions.ts';
import { DomainError } from '../core/errors.ts';
import type { ApiDeprecation } from '../config.ts';
import { ProblemError } from './problem.ts';
import { downgrade, isVersioned, requestSchemaAt, upgradeRequest, versionedSchemaId } from './versions/versions.ts';
import type { JsonObject } from './versions/version-change.ts';

const VENDOR_TYPE = /^application\/vnd\.orderpay\.v(\d+)\+json$/i;

export function vendorMediaType(version: number): string {
  return `application/vnd.orderpay.v${version}+json`;
}

/** Where each version's deprecation points its clients: the migration guide to the next version. */
export function migrationGuideUrl(publicUrl: string, version: number): string {
  return `${publicUrl}/docs/migrating-to-v${version + 1}`;
}

/** The versions named in Accept through the vendor media type, in the client's order. */
function versionsInAccept(accept: string | undefined): number[] {
  if (!accept || !/vnd\.orderpay/i.test(accept)) return [];
  const versions: number[] = [];
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().split(';');
    if (params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p))) continue;
    const match = VENDOR_TYPE.exec(type?.trim() ?? '');
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

/**
 * The version pinned to the client a bearer token was issued to (its api_version claim). Read
 * without verifying the token: it only chooses which route answers, and that route authenticates
 * the token before anything else; a forged claim gets the 401 any forged token gets.
 */
function pinnedVersion(authorization: string | undefined): number {
  if (!authorization || authorization.length > 8192) return UNPINNED_API_VERSION;
  let version = recentPins.get(authorization);
  if (version === undefined) {
    version = readPin(authorization);
    // A client sends its token many times: decoding it once is enough (bounded; any process can redo it).
    if (recentPins.size >= RECENT_PINS) recentPins.delete(recentPins.keys().next().value as string);
    recentPins.set(authorization, version);
  }
  return version;
}

const RECENT_PINS = 1024;
const recentPins = new Map<string, number>();

function readPin(authorization: string): number {
  const payload = /^Bearer +[\w-]+\.([\w-]+)\.[\w-]+$/i.exec(authorization)?.[1];
  if (!payload) return UNPINNED_API_VERSION;
  try {
    const claim = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { api_version?: unknown }).api_version;
    return typeof claim === 'number' && isApiVersion(claim) ? claim : UNPINNED_API_VERSION;
  } catch {
    return UNPINNED_API_VERSION;
  }
}

/** The version an unversioned request gets: the first supported one Accept names, else the client's pin. */
function negotiatedVersion(headers: FastifyRequest['headers']): number {
  const requested = versionsInAccept(headers.accept).find(isApiVersion);
  return requested ?? pinnedVersion(headers.authorization);
}

/** find-my-way constraint strategy: unversioned routes, one per version, chosen per request. */
export const apiVersionConstraint = {
  name: 'apiVersion',
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (version: string) => handlers.get(version) ?? null,
      set: (version: string, handler: unknown) => void handlers.set(version, handler),
    };
  },
  deriveConstraint: (request: { headers: FastifyRequest['headers'] }) => String(negotiatedVersion(request.headers)),
  // The /v<N> routes carry no constraint and must still match requests whatever they derive.
  mustMatchWhenDerived: false,
  validate(value: unknown) {
    if (typeof value !== 'string' || !isApiVersion(Number(value)))
      throw new Error(`apiVersion constraint ${String(value)} is not a version`);
  },
};

export interface VersionScope {
  /** The version this group of routes speaks. */
  version: number;
  /** True for the unversioned paths (negotiated), false under /v<N>. */
  negotiated: boolean;
  /** Dates of the versions being retired. */
  deprecations: readonly ApiDeprecation[];
}

/** What an onRoute hook recorded of a route: the resource each success status represents, the body it takes. */
interface VersionedRouteConfig {
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
function versionRoute(scope: VersionScope, route: RouteOptions): void {
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

/** Content type of a successful JSON answer: the vendor type when the client asked for it. */
export function jsonContentType(request: FastifyRequest): string {
  return request.wantsVendorType ? vendorMediaType(request.apiVersion) : 'application/json; charset=utf-8';
}

/**
 * The hooks of one version's route group: each route reshaped to the version, the version
 * resolved (406 when Accept contradicts it), its deprecation published, 410 after its sunset.
 */
export function versionRoutes(app: FastifyInstance, scope: VersionScope): void {
  app.addHook('onRoute', (route) => versionRoute(scope, route));
  const retired = scope.deprecations.find((d) => d.version === scope.version);
  const published = retired && deprecationHeaders(app.config.publicUrl, retired);
  const pathVersion = scope.negotiated ? undefined : scope.version;
  const versionHeader = String(scope.version);
  app.addHook('onRequest', async function resolveApiVersion(request, reply) {
    reply.header('vary', 'Accept');
    const requested = versionsInAccept(request.headers.accept);
    if (requested.length > 0 && !requested.includes(scope.version)) {
      throw new DomainError(
        'VERSION_NOT_ACCEPTABLE',
        pathVersion === undefined
          ? `API v${requested.join(', v')} is not available; supported: ${API_VERSION_NUMBERS.map((v) => `v${v}`).join(', ')}.`
          : `The path selects API v${pathVersion} but Accept asks for v${requested.join(', v')}.`,
      );
    }
    request.apiVersion = scope.version;
    request.apiPathPrefix = pathVersion === undefined ? '' : `/v${pathVersion}`;
    request.wantsVendorType = requested.length > 0;
    reply.header('api-version', versionHeader);
    if (retired && published) {
      reply.header('deprecation', published.deprecation).header('sunset', published.sunset).header('link', published.link);
      if (Date.now() >= retired.sunset.getTime()) throw sunsetProblem(request, retired);
    }
  });
}

/** What a retired version's responses carry: RFC 9745 Deprecation, RFC 8594 Sunset, the guide's Link. */
function deprecationHeaders(publicUrl: string, retired: ApiDeprecation): { deprecation: string; sunset: string; link: string } {
  return {
    deprecation: `@${Math.floor(retired.deprecation.getTime() / 1000)}`,
    sunset: retired.sunset.toUTCString(),
    link: `<${migrationGuideUrl(publicUrl, retired.version)}>; rel="deprecation"; type="text/markdown"`,
  };
}

function sunsetProblem(request: FastifyRequest, retired: ApiDeprecation): ProblemError {
  const guide = migrationGuideUrl(request.server.config.publicUrl, retired.version);
  return new ProblemError(
    'VERSION_SUNSET',
    `API v${retired.version} was retired on ${retired.sunset.toISOString()}; use v${retired.version + 1} (migration guide: ${guide}).`,
    { extensions: { migrationGuide: guide } },
  );
}

/** Declares what every request carries once its route group resolved the version. */
async function versioning(app: FastifyInstance): Promise<void> {
  app.decorateRequest('apiVersion', UNPINNED_API_VERSION);
  app.decorateRequest('apiPathPrefix', '');
  app.decorateRequest('wantsVendorType', false);
  app.decorateRequest('upgradedBody', undefined);
  app.decorateRequest('sentBody', undefined);
}

export const versioningPlugin = fp(versioning, { name: 'orderpay-versioning', fastify: '5.x' });

declare module 'fastify' {
  interface FastifyRequest {
    apiVersion: number;
    /** "/v1" when the request came through a version prefix, "" on unversioned paths. */
    apiPathPrefix: string;
    wantsVendorType: boolean;
    /** The request body's name when it was upgraded from an older version (problem pointers map back). */
    upgradedBody: string | undefined;
    /** The body as sent, when upgradedBody says it was upgraded. */
    sentBody: unknown;
  }
  interface FastifyContextConfig extends VersionedRouteConfig {}
}
