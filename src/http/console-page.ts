// /console: the staff console, a single-page app built into console/dist (docs/console.md). Its
// hashed assets are cached for a year, its page revalidated on every load; one Content-Security-
// Policy without 'unsafe-inline' covers both. The page learns where to sign in and which API to
// call from /console/config.json, not from an inline script.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { STAFF_ONLY_SCOPES } from '../core/scopes.ts';

/** The public client the console signs in with (src/auth/console-client.ts). */
export const CONSOLE_CLIENT_ID = 'orderpay-console';
/** Where the authorization server sends the console's sign-in answer. */
export const CONSOLE_CALLBACK_PATH = '/console/callback';
/** Where the authorization server sends the browser once the session has ended. */
export const CONSOLE_SIGNED_OUT_PATH = '/console/signed-out';
/** The API version the console speaks: its calls go to /v3 (@orderpay/client's API_VERSION). */
export const CONSOLE_API_VERSION = 3;
/** Where `npm install` (the root `prepare` script) builds the console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** How the console signs in, from the client's metadata; null where it cannot (see console-client.ts). */
export interface ConsoleSignIn {
  clientId: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  scope: string;
}

export interface ConsolePageOptions {
  config: Config;
  signIn: ConsoleSignIn | null;
  /** The built console; CONSOLE_DIST unless a test names another. */
  distDir?: string;
}

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;
/** Not API operations: in no version's OpenAPI document. */
const HIDDEN = { schema: { hide: true } };

/** The console's CSP: everything from here, the API and the issuer fetched, framed by no one. */
function consoleCsp(config: Config): string {
  const issuer = new URL(config.issuer).origin;
  const connect = new Set(["'self'", new URL(config.publicUrl).origin, issuer]);
  const formAction = new Set(["'self'", issuer]);
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${[...connect].join(' ')}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    `form-action ${[...formAction].join(' ')}`,
    "object-src 'none'",
  ].join('; ');
}

/** What /console/config.json tells the page: not part of the API, and never a secret. */
function describeConsole(config: Config, signIn: ConsoleSignIn | null): Record<string, unknown> {
  return {
    issuer: config.issuer,
    apiUrl: config.publicUrl,
    apiVersion: CONSOLE_API_VERSION,
    // A token that carries none of these is a customer's: the console says "staff only".
    staffScopes: [...STAFF_ONLY_SCOPES],
    signIn,
  };
}

/** The page a browser gets for /console when console/dist was never built. */
const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built · orderpay</title></head>
<body><main><h1>The staff console is not built</h1>
<p>This orderpay has no <code>console/dist</code>. <code>npm install</code> builds it (and <code>npm start</code> when it is missing or older than its sources); or run <code>npm run build --workspace console</code>, then restart the server.</p></main></body></html>`;

async function consolePage(app: FastifyInstance, { config, signIn, distDir = CONSOLE_DIST }: ConsolePageOptions): Promise<void> {
  const indexPath = join(distDir, 'index.html');
  if (!existsSync(indexPath)) {
    app.log.warn(
      `the staff console is not built (no ${indexPath}): /console answers 503 until \`npm install\` or \`npm run build --workspace console\` builds it`,
    );
    const answerNotBuilt = async function answerConsoleNotBuilt(_request: FastifyRequest, reply: FastifyReply) {
      return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    };
    app.get('/console', HIDDEN, answerNotBuilt);
    app.get('/console/*', HIDDEN, answerNotBuilt);
    return;
  }

  const csp = consoleCsp(config);
  app.addHook('onSend', function sendConsoleCsp(_request, reply, payload, done) {
    reply.header('content-security-policy', csp);
    done(null, payload);
  });

  // Vite names every asset by its content's hash: a changed file is a new URL, so a year is safe.
  await app.register(fastifyStatic, {
    root: join(distDir, 'assets'),
    prefix: '/console/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: ONE_YEAR_MS,
  });

  const settings = JSON.stringify(describeConsole(config, signIn));
  app.get('/console/config.json', HIDDEN, async function sendConsoleConfig(_request, reply) {
    return reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(settings);
  });

  // The page itself for /console and every path below it (the app's routes, /console/callback):
  // revalidated on every load, so a new build's asset names reach the browser at once.
  const index = readFileSync(indexPath);
  const etag = `"${createHash('sha256').update(index).digest('base64url').slice(0, 27)}"`;
  const sendIndex = async function sendConsoleIndex(request: FastifyRequest, reply: FastifyReply) {
    reply.header('cache-control', 'no-cache').header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/html; charset=utf-8').send(index);
  };
  app.get('/console', HIDDEN, sendIndex);
  app.get('/console/*', HIDDEN, sendIndex);
}

/** Encapsulated: its CSP hook and static files belong to /console alone. */
export const consolePagePlugin = fp(consolePage, { name: 'orderpay-console-page', fastify: '5.x', encapsulate: true });
