// A real orderpay process-equivalent on a real socket (the authorization server needs real
// redirects and cookies), plus a cookie-keeping form walker for the login and consent pages.
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { createPublicClient } from '../../src/auth/clients.store.ts';
import { digestOidcIdentifier } from '../../src/auth/oidc.adapter.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Db } from '../../src/db/db.ts';
import { insertUser, type Role } from '../../src/users/users.store.ts';
import { setUpPerFile, UNREACHED_RATE_LIMITS } from './app.ts';
import { createTestDatabase } from './db.ts';

export interface AuthServer {
  app: FastifyInstance;
  db: Db;
  config: Config;
  baseUrl: string;
  issuer: string;
  createUser(email: string, password: string, role?: Role): Promise<{ id: number }>;
  /**
   * Moves one stored code or token `seconds` into the past (iat, exp and the row's expires_at), as
   * if that time had gone by: the provider takes no clock, and the adapter honours expires_at.
   */
  backdateOidcPayload(model: string, id: string, seconds: number): Promise<void>;
  close(): Promise<void>;
}

export async function startAuthServer(port: number, env: Record<string, string> = {}, options: AppOptions = {}): Promise<AuthServer> {
  const { db, drop } = await createTestDatabase();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    PUBLIC_URL: baseUrl,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    ...UNREACHED_RATE_LIMITS,
    ...env,
  });
  const app = await buildApp(config, db, { logger: false, ...options });
  await app.listen({ host: '127.0.0.1', port });
  return {
    app,
    db,
    config,
    baseUrl,
    issuer: config.issuer,
    async createUser(email, password, role = 'customer') {
      return insertUser(db, { email, name: email.split('@')[0]!, role, passwordHash: await hashPassword(password) });
    },
    async backdateOidcPayload(model, id, seconds) {
      const { rowCount } = await db.query(
        `UPDATE oidc_payloads SET expires_at = expires_at - make_interval(secs => $3::int),
           payload = payload || jsonb_build_object('iat', (payload ->> 'iat')::bigint - $3::int, 'exp', (payload ->> 'exp')::bigint - $3::int)
         WHERE model = $1 AND id = $2`,
        [model, digestOidcIdentifier(id), seconds],
      );
      assert.equal(rowCount, 1, `no stored ${model} to backdate`);
    },
    async close() {
      await app.close();
      await drop();
    },
  };
}

/**
 * Another process behind the same load balancer: the same configuration and database, its own
 * token memo and copies of the revocations, read at the default interval (one second).
 */
export async function startSecondInstance(server: Pick<AuthServer, 'config' | 'db'>, port: number): Promise<FastifyInstance> {
  const second = await buildApp(server.config, server.db, { logger: false });
  await second.listen({ host: '127.0.0.1', port });
  return second;
}

/** A minimal browser: keeps cookies per host, does not follow redirects by itself. */
export class FormBrowser {
  private cookies = new Map<string, string>();

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    const cookie = [...this.cookies.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(set) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Follows redirects on the server's own origin; stops at the first one elsewhere (the client's callback). */
  async follow(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<{ response: Response; url: string }> {
    let response = await this.request(url, init);
    let current = url;
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get('location')!, current).toString();
      if (new URL(next).origin !== new URL(url).origin) return { response, url: next };
      current = next;
      response = await this.request(current);
    }
    return { response, url: current };
  }
}

/** Extracts a form's action and hidden fields from one of our pages. */
export function readForm(html: string, index = 0): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
  const form = forms[index];
  assert.ok(form, `form ${index} not found in page`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[input[1]!] = input[2]!;
  return { action: form[1]!.replaceAll('&#38;', '&'), fields };
}

/**
 * Walks authorize → login → consent with forms, as a user would, and returns the URL the browser
 * is finally sent to (the client's redirect_uri with code and state).
 */
export async function signInWithForms(
  server: Pick<AuthServer, 'baseUrl'>,
  authorizationUrl: string,
  email: string,
  password: string,
  browser = new FormBrowser(),
): Promise<URL> {
  let { response, url } = await browser.follow(authorizationUrl);
  assert.equal(response.status, 200, `login page expected at ${url}`);
  const login = readForm(await response.text());
  ({ response, url } = await browser.follow(new URL(login.action, server.baseUrl).toString(), {
    form: { ...login.fields, email, password },
  }));
  if (new URL(url).origin === server.baseUrl) {
    assert.equal(response.status, 200, `consent page expected at ${url}`);
    const consent = readForm(await response.text(), 0);
    ({ url } = await browser.follow(new URL(consent.action, server.baseUrl).toString(), { form: consent.fields }));
  }
  return new URL(url);
}

/** openid-client's view of one of the server's clients, from its discovery document (plain http). */
export function discoverClient(
  server: Pick<AuthServer, 'issuer'>,
  clientId: string,
  auth: client.ClientAuth = client.None(),
  secret?: string,
): Promise<client.Configuration> {
  return client.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

interface SignInOptions {
  scope: string;
  redirectUri: string;
  email: string;
  password: string;
  /** A fresh one by default: a new session, hence a new grant. */
  browser?: FormBrowser;
  prompt?: string;
}

/**
 * A user's authorization (authorization code with PKCE S256) through the forms: the callback URL the
 * browser is sent to, and the checks the code's exchange needs.
 */
export async function authorizeWithForms(
  server: Pick<AuthServer, 'baseUrl'>,
  config: client.Configuration,
  { scope, redirectUri, email, password, browser, prompt }: SignInOptions,
): Promise<{ callback: URL; checks: { pkceCodeVerifier: string; expectedState: string } }> {
  const { url, checks } = await buildPkceAuthorization(config, { redirectUri, scope, prompt });
  const callback = await signInWithForms(server, url, email, password, browser);
  return { callback, checks };
}

/** A user's sign-in: authorize → login → consent → code exchange. */
export async function signInWithCode(
  server: Pick<AuthServer, 'baseUrl'>,
  config: client.Configuration,
  options: SignInOptions,
): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  const { callback, checks } = await authorizeWithForms(server, config, options);
  return client.authorizationCodeGrant(config, callback, checks);
}

/** A server, a customer and the public app they sign in to, as openid-client sees it. */
export interface SigningInApp {
  server: AuthServer;
  userId: number;
  app: client.Configuration;
  /** authorize → login → consent → code exchange (PKCE S256), for these scopes. */
  signIn(scope: string): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers>;
}

/** The scopes the app is registered for, unless said otherwise. */
const PROFILE_APP_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'orders:read'];

/** A server with a customer and their public app, shared by the tests of one file (setUpPerFile). */
export function setUpSigningInApp(
  port: number,
  {
    email,
    password,
    redirectUri,
    scopes = PROFILE_APP_SCOPES,
  }: { email: string; password: string; redirectUri: string; scopes?: string[] },
): SigningInApp {
  return setUpPerFile(
    async () => {
      const server = await startAuthServer(port);
      const { id: userId } = await server.createUser(email, password, 'customer');
      const { clientId } = await createPublicClient(server.db, { name: 'Profile app', redirectUris: [redirectUri], scopes });
      const app = await discoverClient(server, clientId);
      return { server, userId, app, signIn: (scope: string) => signInWithCode(server, app, { scope, redirectUri, email, password }) };
    },
    (started) => started.server.close(),
  );
}

/**
 * An authorization request with PKCE (RFC 7636, S256) and state: the URL to send the browser to,
 * and the checks its code is exchanged with.
 */
export async function buildPkceAuthorization(
  config: client.Configuration,
  { redirectUri, scope, prompt }: { redirectUri: string; scope: string; prompt?: string },
) {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    state: expectedState,
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    ...(prompt ? { prompt } : {}),
  });
  return { url: url.toString(), checks: { pkceCodeVerifier, expectedState } };
}

/**
 * Sends the request again until its answer is `done`, or the deadline passes, and returns the last
 * answer: a process reads revocations (and their end) at most once a second. Polled, not slept.
 */
async function untilAnswer(request: () => Promise<Response>, done: (response: Response) => boolean, deadlineMs: number): Promise<Response> {
  const deadline = performance.now() + deadlineMs;
  let response = await request();
  while (!done(response) && performance.now() < deadline) {
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
    response = await request();
  }
  return response;
}

/** The request's answer once it is no longer 200 (a revocation has reached the process), or at the deadline. */
export const untilRefused = (request: () => Promise<Response>, deadlineMs: number) =>
  untilAnswer(request, (response) => response.status !== 200, deadlineMs);

/** The request's answer once it is 200 (an enable has reached the process), or at the deadline. */
export const untilAccepted = (request: () => Promise<Response>, deadlineMs: number) =>
  untilAnswer(request, (response) => response.status === 200, deadlineMs);

/**
 * RFC 6750 §3.1: a token whose grant was revoked, or whose user or client was disabled, is
 * invalid_token, and the problem says revoked. `response` answered GET /v1/orders.
 */
export async function assertRevokedToken(server: Pick<AuthServer, 'config'>, response: Response): Promise<void> {
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(
    response.headers.get('www-authenticate'),
    'Bearer realm="orderpay", error="invalid_token", error_description="the token has been revoked"',
  );
  assert.deepEqual(await response.json(), {
    type: `${server.config.publicUrl}/problems/auth-token-invalid`,
    title: 'Access token is invalid',
    status: 401,
    detail: 'The access token is invalid: the token has been revoked.',
    instance: '/v1/orders',
    code: 'AUTH_TOKEN_INVALID',
    requestId: response.headers.get('x-request-id'),
  });
}
