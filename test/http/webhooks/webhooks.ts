// Webhook endpoints as their suites make and check them: registered through the API, the rows read
// back with SQL, and the deliveries' attempts written as the dispatcher writes them.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { type Config, loadConfig } from '../../../src/config.ts';
import type { Db } from '../../../src/db/db.ts';
import type { Scope } from '../../../src/core/scopes.ts';
import { createStaffToken } from '../../helpers/actors.ts';
import { PUBLIC_URL, type TestApp } from '../../helpers/app.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const MISSING_ID = 2_000_000_000;
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
/** A public address as an IP literal: the guard accepts it without asking DNS. */
export const PUBLIC_URL_LITERAL = 'https://93.184.215.14/hooks';
export const WEBHOOK_SCOPES: Scope[] = ['webhooks:read', 'webhooks:write'];

/**
 * The configuration of these suites: deliveries stay as a test leaves them (they check pending
 * deliveries and the attempts they write themselves), so the app delivers nothing
 * (ORDERPAY_WEBHOOKS_DELIVER=false).
 */
export function webhookTestConfig(overrides: Partial<Config['webhooks']> = {}): Partial<Config> {
  const { webhooks } = loadConfig({ NODE_ENV: 'test', PUBLIC_URL });
  return { webhooks: { ...webhooks, deliver: false, ...overrides } };
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A staff token holding the webhook scopes (or those given). */
export const webhookStaffToken = (t: TestApp, scopes: Scope[] = WEBHOOK_SCOPES) => createStaffToken(t, scopes);

export function send(
  t: TestApp,
  method: Method,
  token: string | undefined,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.request(token, { method, url, headers, ...(payload === undefined ? {} : { payload: payload as string }) });
}

/** An endpoint's backlog as the API shows it. */
export interface Backlog {
  pending: number;
  oldestDueAt: string | null;
}

export const NO_BACKLOG: Backlog = { pending: 0, oldestDueAt: null };

export interface CreatedEndpoint {
  id: number;
  url: string;
  enabledEvents: string[];
  apiVersion: number;
  description: string;
  disabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  lastSucceededAt: string | null;
  backlog: Backlog | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  secret: string;
}

/** An endpoint the test needs as a precondition: 201 asserted, the answer (with its secret) returned. */
export async function registerEndpoint(t: TestApp, token: string, body: Record<string, unknown> = {}): Promise<CreatedEndpoint> {
  const res = await send(t, 'POST', token, '/webhook-endpoints', { url: PUBLIC_URL_LITERAL, enabledEvents: ['*'], ...body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export interface StoredEndpoint {
  id: number;
  url: string;
  enabledEvents: string[];
  apiVersion: number;
  description: string;
  disabled: boolean;
  /** As stored: null on a disabled endpoint is the dispatcher's disable ('failing'). */
  disabledReason: string | null;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  failingSince: string | null;
  lastSucceededAt: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export async function storedEndpoint(db: Db, id: number): Promise<StoredEndpoint | undefined> {
  const { rows } = await db.query<StoredEndpoint>(
    `SELECT id, url, enabled_events AS "enabledEvents", api_version AS "apiVersion", description, disabled, secret,
            previous_secret AS "previousSecret", previous_secret_expires_at AS "previousSecretExpiresAt",
            failing_since AS "failingSince", disabled_reason AS "disabledReason", last_succeeded_at AS "lastSucceededAt",
            created_at AS "createdAt", updated_at AS "updatedAt", version
       FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** The endpoint as GET shows it: the row less its secrets and version, with its backlog (none unless given). */
export function shownEndpoint({ secret: _s, previousSecret: _p, version: _v, ...endpoint }: StoredEndpoint, backlog: Backlog = NO_BACKLOG) {
  const disabledReason = endpoint.disabled ? (endpoint.disabledReason ?? 'failing') : null;
  return { ...endpoint, disabledReason, backlog };
}

export interface StoredDelivery {
  id: number;
  endpointId: number;
  eventId: string;
  state: string;
  attempts: number;
}

export async function storedDeliveries(db: Db, where: string, params: unknown[]): Promise<StoredDelivery[]> {
  const { rows } = await db.query<StoredDelivery>(
    `SELECT id, endpoint_id AS "endpointId", event_id AS "eventId", state, attempts FROM webhook_deliveries WHERE ${where} ORDER BY id`,
    params,
  );
  return rows;
}

/** An attempt as the dispatcher records it, and the delivery's counters moved as it moves them. */
export async function recordAttempt(
  db: Db,
  deliveryId: number,
  attempt: { statusCode: number | null; durationMs: number; error: string | null; responseBody: string | null },
  delivery: { state: 'pending' | 'succeeded' | 'failed' },
): Promise<void> {
  await db.query(`INSERT INTO webhook_attempts (delivery_id, status_code, duration_ms, error, response_body) VALUES ($1, $2, $3, $4, $5)`, [
    deliveryId,
    attempt.statusCode,
    attempt.durationMs,
    attempt.error,
    attempt.responseBody,
  ]);
  await db.query(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, state = $2, next_attempt_at = now() + interval '5 seconds', updated_at = now()
      WHERE id = $1`,
    [deliveryId, delivery.state],
  );
}
