// API versions: a /v<N> path prefix, or on unversioned paths the Accept media type
// application/vnd.orderpay.v<N>+json (default: the oldest supported version). Resource routes are
// registered once per version in API_VERSIONS; a new version adds an entry here plus its
// representation changes, without touching the handlers of the versions before it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { UNPINNED_API_VERSION } from '../core/api-versions.ts';
import { DomainError } from '../core/errors.ts';

export interface ApiVersion {
  version: number;
  /** RFC 9745 Deprecation and RFC 8594 Sunset dates, once a newer version replaces this one. */
  deprecation?: Date;
  sunset?: Date;
}

export const API_VERSIONS: readonly ApiVersion[] = [{ version: 1 }];
export const DEFAULT_VERSION = UNPINNED_API_VERSION;

const VENDOR_TYPE = /^application\/vnd\.orderpay\.v(\d+)\+json$/i;

export function vendorMediaType(version: number): string {
  return `application/vnd.orderpay.v${version}+json`;
}

/** The versions named in Accept through the vendor media type, in the client's order. */
function versionsInAccept(accept: string | undefined): number[] {
  if (!accept) return [];
  const versions: number[] = [];
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().split(';');
    if (params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p))) continue;
    const match = VENDOR_TYPE.exec(type?.trim() ?? '');
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

function isSupported(version: number): boolean {
  return API_VERSIONS.some((v) => v.version === version);
}

/**
 * onRequest hook of a versioned route group. pathVersion is the /v<N> the route was registered
 * under, or undefined for the unversioned paths that negotiate.
 */
export function resolveApiVersion(pathVersion: number | undefined) {
  return async function negotiateApiVersion(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const requested = versionsInAccept(request.headers.accept);
    let version: number;
    // Accept selects the media type (vendor or plain JSON) and can make it a 406 on /v<N> paths too.
    reply.header('vary', 'Accept');
    if (pathVersion !== undefined) {
      if (requested.length > 0 && !requested.includes(pathVersion)) {
        throw new DomainError(
          'VERSION_NOT_ACCEPTABLE',
          `The path selects API v${pathVersion} but Accept asks for v${requested.join(', v')}.`,
        );
      }
      version = pathVersion;
    } else {
      const supported = requested.filter(isSupported);
      if (requested.length > 0 && supported.length === 0) {
        throw new DomainError(
          'VERSION_NOT_ACCEPTABLE',
          `API v${requested.join(', v')} is not available; supported: ${API_VERSIONS.map((v) => `v${v.version}`).join(', ')}.`,
        );
      }
      version = supported[0] ?? DEFAULT_VERSION;
    }
    request.apiVersion = version;
    request.apiPathPrefix = pathVersion === undefined ? '' : `/v${pathVersion}`;
    request.wantsVendorType = requested.length > 0;
    const info = API_VERSIONS.find((v) => v.version === version);
    if (info?.deprecation) reply.header('deprecation', `@${Math.floor(info.deprecation.getTime() / 1000)}`);
    if (info?.sunset) reply.header('sunset', info.sunset.toUTCString());
  };
}

/** Content type of a successful JSON answer: the vendor type when the client asked for it. */
export function jsonContentType(request: FastifyRequest): string {
  return request.wantsVendorType ? vendorMediaType(request.apiVersion) : 'application/json; charset=utf-8';
}

/** Declares what every request carries once its route group resolved the version. */
async function versioning(app: FastifyInstance): Promise<void> {
  app.decorateRequest('apiVersion', DEFAULT_VERSION);
  app.decorateRequest('apiPathPrefix', '');
  app.decorateRequest('wantsVendorType', false);
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
