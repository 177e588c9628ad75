// Webhook endpoints in SQL. A record never holds a signing secret: the sealed secrets are written
// here and read only by the dispatcher, so no record (an event's object, a log line, a response)
// can carry one by accident.
import type { PagePlan, PageRows } from '../core/paging.ts';
import type { Queryable } from '../db/db.ts';
import { selectPage, type SortColumn } from '../db/paging.ts';
import { type DisabledReason, PREVIOUS_SECRET_LIFETIME_HOURS, type WebhookEndpointSortKey } from './endpoints.rules.ts';

/** What a caller sets on an endpoint. */
export interface WebhookEndpointFields {
  url: string;
  /** Event types, or ['*'] for every type. */
  enabledEvents: string[];
  apiVersion: number;
  description: string;
  disabled: boolean;
}

export interface WebhookEndpointRecord extends WebhookEndpointFields {
  id: number;
  /** Until when the secret before the last rotation still signs; null if never rotated. */
  previousSecretExpiresAt: string | null;
  /** Since when every attempt has failed; null after any success (set by the dispatcher). */
  failingSince: string | null;
  /** Why it is disabled, as stored: null on a disabled one is the dispatcher's (shownDisabledReason). */
  disabledReason: DisabledReason | null;
  /** A recent success, at most about a second older than the latest (set by the dispatcher). */
  lastSucceededAt: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** An endpoint's record, never its secrets (the disabled and ping events carry it). */
export const WEBHOOK_ENDPOINT_COLUMNS = `id, url, enabled_events AS "enabledEvents", api_version AS "apiVersion", description, disabled,
  previous_secret_expires_at AS "previousSecretExpiresAt", failing_since AS "failingSince",
  disabled_reason AS "disabledReason", last_succeeded_at AS "lastSucceededAt",
  created_at AS "createdAt", updated_at AS "updatedAt", version`;
const SORT_COLUMNS: Record<WebhookEndpointSortKey, SortColumn> = {
  createdAt: { sql: 'created_at', type: 'timestamp' },
  id: { sql: 'id', type: 'integer' },
};

/** The endpoint, if it is pinned to shownTo or an earlier API version (a later one is not there for a reader of shownTo). */
export async function findWebhookEndpoint(
  db: Queryable,
  id: number,
  shownTo: number,
  lock = false,
): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await db.query<WebhookEndpointRecord>(
    `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND api_version <= $2${lock ? ' FOR UPDATE' : ''}`,
    [id, shownTo],
  );
  return rows[0];
}

/** One page of endpoints and the exact total, in one statement (db/paging.ts). */
export function selectWebhookEndpoints(
  db: Queryable,
  filters: { disabled?: boolean; shownTo: number },
  plan: PagePlan<WebhookEndpointSortKey>,
): Promise<PageRows<WebhookEndpointRecord>> {
  const params: unknown[] = [filters.shownTo];
  const where = `api_version <= $1${filters.disabled === undefined ? '' : ` AND disabled = $${params.push(filters.disabled)}`}`;
  return selectPage<WebhookEndpointRecord, WebhookEndpointSortKey>(
    db,
    {
      countSql: `SELECT count(*) AS collection_total FROM webhook_endpoints WHERE ${where}`,
      rowsSql: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${where}`,
      columns: SORT_COLUMNS,
      params,
    },
    plan,
  );
}

/** What a manager's write stores: the settings, and why the endpoint is disabled (null when enabled). */
export interface WebhookEndpointWrite extends WebhookEndpointFields {
  disabledReason: DisabledReason | null;
}

/** A new endpoint with its signing secret, sealed by the caller (src/webhooks/secrets.ts). */
export async function insertWebhookEndpoint(
  db: Queryable,
  fields: WebhookEndpointWrite,
  sealedSecret: string,
): Promise<WebhookEndpointRecord> {
  const { rows } = await db.query<WebhookEndpointRecord>(
    `INSERT INTO webhook_endpoints (url, enabled_events, api_version, description, disabled, disabled_reason, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [fields.url, fields.enabledEvents, fields.apiVersion, fields.description, fields.disabled, fields.disabledReason, sealedSecret],
  );
  return rows[0]!;
}

export async function updateWebhookEndpoint(db: Queryable, id: number, fields: WebhookEndpointWrite): Promise<WebhookEndpointRecord> {
  const { rows } = await db.query<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints
        SET url = $2, enabled_events = $3, api_version = $4, description = $5, disabled = $6, disabled_reason = $7,
            version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [id, fields.url, fields.enabledEvents, fields.apiVersion, fields.description, fields.disabled, fields.disabledReason],
  );
  return rows[0]!;
}

/**
 * Disables the enabled endpoints pinned to any of these API versions, each a new revision, for
 * `api_version_retired`; their records after the change. Endpoints disabled already keep their reason.
 */
export async function disableEndpointsPinnedTo(db: Queryable, apiVersions: readonly number[]): Promise<WebhookEndpointRecord[]> {
  const { rows } = await db.query<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'api_version_retired', version = version + 1, updated_at = now()
      WHERE api_version = ANY($1::int[]) AND NOT disabled
     RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [apiVersions],
  );
  return rows;
}

/**
 * A new signing secret (sealed): the current one becomes the previous one, which keeps signing for
 * PREVIOUS_SECRET_LIFETIME_HOURS; one rotated before it stops at once. The secrets never leave SQL.
 */
export async function rotateWebhookEndpointSecret(
  db: Queryable,
  id: number,
  sealedSecret: string,
  shownTo: number,
): Promise<WebhookEndpointRecord | undefined> {
  const { rows } = await db.query<WebhookEndpointRecord>(
    `UPDATE webhook_endpoints
        SET previous_secret = secret, secret = $2,
            previous_secret_expires_at = now() + make_interval(hours => $3),
            version = version + 1, updated_at = now()
      WHERE id = $1 AND api_version <= $4 RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    [id, sealedSecret, PREVIOUS_SECRET_LIFETIME_HOURS, shownTo],
  );
  return rows[0];
}

/** Deletes the endpoint, its secrets and, by cascade, its deliveries and their attempts. */
export async function deleteWebhookEndpoint(db: Queryable, id: number): Promise<void> {
  await db.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
}
