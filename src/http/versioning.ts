// API versions at the edge. Every resource route is registered once per version: under /v<N>, and
// on the unversioned path with the route constraint apiVersion, which picks the version from the
// Accept media type application/vnd.orderpay.v<N>+json or else the calling client's pinned version
// (the access token's api_version claim; v1 without one). Handlers speak the latest version: an
// older version's request bodies are upgraded before the handler and its responses downgraded
// after it, through the version changes (./versions/). Deprecated versions carry their dates.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { API_VERSION_NUMBERS, isApiVersion, UNPINNED_API_VERSION } from '../core/api-versions.ts';
import { DomainError } from '../core/errors.ts';
import type { ApiDeprecation } from '../config.ts';
import { ProblemError } from './problem.ts';
import { TailKeyedMap } from './tail-keyed-map.ts';
import { versionRoute } from './version-routes.ts';

const VENDOR_TYPE = /^application\/vnd\.orderpay\.v(\d+)\+json$/i;

export function vendorMediaType(version: number): string {
  return `application/vnd.orderpay.v${version}+json`;
}

/** Where each version's deprecation points its clients: the migration guide to the next version. */
export function migrationGuideUrl(publicUrl: string, version: number): string {
  return `${publicUrl}/docs/migrating-to-v${version + 1}`;
}

/**
 * The versions named in Accept through the vendor media type, most preferred first: by weight
 * (RFC 9110 §12.4.2, q case-insensitive; q=0 refuses), then in the client's order.
 */
function versionsInAccept(accept: string | undefined): number[] {
  if (!accept || !/vnd\.orderpay/i.test(accept)) return [];
  const named: { version: number; weight: number }[] = [];
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().split(';');
    const match = VENDOR_TYPE.exec(type?.trim() ?? '');
    if (!match) continue;
    const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)).find(Boolean);
    const weight = q ? Number(q[1]) : 1;
    if (weight > 0) named.push({ version: Number(match[1]), weight });
  }
  // Array.prototype.sort is stable: equal weights keep the client's order.
  return named.sort((a, b) => b.weight - a.weight).map((n) => n.version);
}

/**
 * The version pinned to the client a bearer token was issued to (its api_version claim). Read
 * without verifying the token: it only chooses which route answers, and that route authenticates
 * the token before anything else; a forged claim gets the 401 any forged token gets.
 */
function readPinnedVersion(authorization: string): number {
  // Only bearer JWTs name a pin; other credentials (a client's Basic secret) are not even read.
  const payload = /^Bearer +[\w-]+\.([\w-]+)\.[\w-]+$/i.exec(authorization)?.[1];
  if (!payload) return UNPINNED_API_VERSION;
  try {
    const claim = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { api_version?: unknown }).api_version;
    return typeof claim === 'number' && isApiVersion(claim) ? claim : UNPINNED_API_VERSION;
  } catch {
    return UNPINNED_API_VERSION;
  }
}

/**
 * Pins of the credentials seen last, a pure function of the header: a client reuses its token for
 * many requests, and decoding it on each was some 7% of a revalidation's CPU. Bounded (oldest out).
 */
const pins = new TailKeyedMap<number>(1_000);

function pinnedVersion(authorization: string | undefined): number {
  if (!authorization) return UNPINNED_API_VERSION;
  const known = pins.get(authorization);
  if (known !== undefined) return known;
  const version = readPinnedVersion(authorization);
  pins.set(authorization, version);
  return version;
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

/** Content type of a successful JSON answer: the vendor type when the client asked for it. */
export function jsonContentType(request: FastifyRequest): string {
  return request.wantsVendorType ? vendorMediaType(request.apiVersion) : 'application/json; charset=utf-8';
}

/**
 * The hooks of one version's route group: each route reshaped to the version, the version
 * resolved (406 when Accept contradicts it), its deprecation published, 410 after its sunset.
 */
export function versionRoutes(app: FastifyInstance, scope: VersionScope): void {
  app.addHook('onRoute', function reshapeForVersion(route) {
    versionRoute(scope, route);
  });
  const retired = scope.deprecations.find((d) => d.version === scope.version);
  const published = retired && deprecationHeaders(app.config.publicUrl, retired);
  const pathVersion = scope.negotiated ? undefined : scope.version;
  const versionHeader = String(scope.version);
  // Synchronous (a refusal is thrown, which Fastify's hook runner answers as an async hook's rejection).
  app.addHook('onRequest', function resolveApiVersion(request, reply, done) {
    // Added to, not replaced: the CORS hook before this one may vary by Origin.
    const vary = reply.getHeader('vary');
    reply.header('vary', vary ? `${String(vary)}, Accept` : 'Accept');
    const requested = versionsInAccept(request.headers.accept);
    const contradicted = requested.length > 0 && !requested.includes(scope.version);
    // A /v<N> path is in its version whatever Accept says: its dates (and sunset) come first.
    // An unversioned request whose Accept names no version served is in none.
    if (pathVersion !== undefined || !contradicted) {
      reply.header('api-version', versionHeader);
      if (retired && published) {
        reply.header('deprecation', published.deprecation).header('sunset', published.sunset).header('link', published.link);
        if (Date.now() >= retired.sunset.getTime()) throw sunsetProblem(request, retired);
      }
    }
    if (contradicted) {
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
    done();
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
  }
}
