// Browser apps on other origins (the Fetch standard's CORS protocol) with @fastify/cors: only
// origins on the allow-list (ORDERPAY_CORS_ORIGINS) get Access-Control-* headers, on every answer
// (problems too, so that the app can read them); preflights are answered here, before the
// versioning, authentication and rate-limit hooks and the router's 404/405 could refuse them.
// Tokens travel as bearer headers, never cookies: no Access-Control-Allow-Credentials.
import type { IncomingHttpHeaders } from 'node:http';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { CorsConfig } from '../config.ts';
import { isLoopbackHost } from '../core/loopback.ts';

/** The methods the API's routes answer. */
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The request headers the API reads (Content-Type beyond the three CORS-safelisted types: application/json). */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  // RFC 9449 §4.1: the proof that goes with a DPoP-bound token.
  'DPoP',
  'Content-Type',
  'Accept',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
];

/** The response headers the API sends that are not CORS-safelisted, so that a browser app may read them. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Link',
  'Idempotent-Replayed',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Api-Version',
  'Deprecation',
  'Sunset',
  'WWW-Authenticate',
  'Allow',
  'X-Request-Id',
];

/** The CORS fields of the API's answers, as the OpenAPI documents describe them (components.headers). */
export const CORS_HEADER_COMPONENTS = {
  'Access-Control-Allow-Origin': {
    description:
      'The calling page\'s origin, when it is on the server\'s allow-list (`ORDERPAY_CORS_ORIGINS`; docs/api.md, "Browser apps (CORS)"): the browser lets that page read the answer. Absent for any other origin, and without `Origin`.',
    schema: { type: 'string', maxLength: 300, pattern: '^https?://[^/\\s]+$', examples: ['https://shop.example.com'] },
  },
  'Access-Control-Expose-Headers': {
    description: 'With `Access-Control-Allow-Origin`: the response fields beyond the CORS-safelisted ones that the page may read.',
    schema: { type: 'string', enum: [CORS_EXPOSED_HEADERS.join(', ')] as string[], maxLength: 300 },
  },
} as const;

/** How long a browser may reuse a preflight's answer: Chromium's ceiling (Firefox allows a day). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;

function isLoopbackOrigin(origin: string): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return url.origin === origin && (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
}

/** Whether a browser on origin may call this server cross-origin. */
export function isAllowedOrigin(config: CorsConfig, origin: string | undefined): origin is string {
  if (!origin) return false;
  return config.origins.includes(origin) || (config.anyLoopbackOrigin && isLoopbackOrigin(origin));
}

/** A CORS preflight: OPTIONS naming the method the browser wants to send. */
export function isPreflight(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

interface CorsOptions {
  config: CorsConfig;
  /** Paths whose answers set their own CORS headers (the authorization server's). */
  answersItself: (url: string) => boolean;
}

/** One request's @fastify/cors options: CORS only for an allowed origin, a preflight only when it is one. */
function corsOptionsFor({ config, answersItself }: CorsOptions) {
  return function decideCors(request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void): void {
    const origin = request.headers.origin;
    if (answersItself(request.url) || !isAllowedOrigin(config, origin)) {
      callback(null, { origin: false });
      return;
    }
    callback(null, {
      origin,
      methods: ALLOWED_METHODS,
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: PREFLIGHT_MAX_AGE_SECONDS,
      // A plain OPTIONS (no Access-Control-Request-Method) is a request like any other: the router's 405.
      preflight: isPreflight(request.method, request.headers),
    });
  };
}

async function crossOrigin(app: FastifyInstance, options: CorsOptions): Promise<void> {
  const { config } = options;
  // Nothing allowed (the default but in development): no hook, no Vary: Origin, OPTIONS stays the router's 405.
  if (config.origins.length === 0 && !config.anyLoopbackOrigin) return;
  // The delegator form adds Vary: Origin to every answer (Fetch standard, "CORS protocol and HTTP
  // caches"): a cache must not serve one origin's answer to another, or to a same-origin request.
  await app.register(cors, { delegator: corsOptionsFor(options), hideOptionsRoute: true });
}

export const corsPlugin = fp(crossOrigin, { name: 'orderpay-cors', fastify: '5.x' });
