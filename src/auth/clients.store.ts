// Registered OAuth clients in SQL: oidc-provider metadata in oauth_clients.metadata, the pinned
// API version in oauth_clients.api_version. A confidential client's secret is stored as an scrypt
// hash and shown to its creator once.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import {
  buildConfidentialClientMetadata,
  buildPublicClientMetadata,
  checkClientApiVersion,
  type ClientMetadata,
  type ConfidentialClientInput,
  type PublicClientInput,
} from './clients.rules.ts';
import {
  buildClientKeysMetadata,
  buildFapi2ClientMetadata,
  clientProfileOf,
  type ClientKeys,
  type ClientProfile,
  type Fapi2ClientInput,
} from './fapi2-profile.ts';
import { hashClientSecret } from './passwords.ts';

/** A client as listed: never its secret, nor the secret's hash. */
export interface ClientSummary {
  clientId: string;
  clientName: string;
  type: 'public' | 'confidential';
  grantTypes: string[];
  redirectUris: string[];
  scope: string;
  tokenEndpointAuthMethod: string;
  /** The security profile the client is held to (src/auth/fapi2-profile.ts). */
  profile: ClientProfile;
  /** A private_key_jwt client's public keys: its jwks_uri, or the JWK Set registered by value. */
  keys?: { jwksUri: string } | { jwks: { keys: Record<string, unknown>[] } };
  /** What the client's unversioned requests get (src/core/api-versions.ts). */
  apiVersion: number;
  createdAt: string;
  /** Since when the client cannot get tokens (`orderpay clients disable`); null when it can. */
  disabledAt: string | null;
  /** Until when the secret before the last rotation still authenticates; null without one. */
  previousSecretExpiresAt: string | null;
}

interface ClientRow {
  client_id: string;
  client_name: string;
  metadata: ClientMetadata;
  api_version: number;
  created_at: string;
  disabled_at: string | null;
  previous_secret_expires_at: string | null;
}

/** The columns a ClientSummary is made of; never a secret's hash. */
const SUMMARY_COLUMNS = `client_id, client_name, metadata - 'client_secret' AS metadata, api_version, created_at, disabled_at,
  previous_secret_expires_at`;

function keysOf(metadata: ClientMetadata): Pick<ClientSummary, 'keys'> {
  if (typeof metadata.jwks_uri === 'string') return { keys: { jwksUri: metadata.jwks_uri } };
  const jwks = metadata.jwks as { keys: Record<string, unknown>[] } | undefined;
  return jwks ? { keys: { jwks } } : {};
}

const toSummary = (row: ClientRow): ClientSummary => ({
  clientId: row.client_id,
  clientName: row.client_name,
  type: row.metadata.token_endpoint_auth_method === 'none' ? 'public' : 'confidential',
  grantTypes: (row.metadata.grant_types as string[] | undefined) ?? [],
  redirectUris: (row.metadata.redirect_uris as string[] | undefined) ?? [],
  scope: (row.metadata.scope as string | undefined) ?? '',
  tokenEndpointAuthMethod: String(row.metadata.token_endpoint_auth_method),
  profile: clientProfileOf(row.metadata),
  ...keysOf(row.metadata),
  apiVersion: row.api_version,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
  previousSecretExpiresAt: row.previous_secret_expires_at,
});

/** 'op_' + 128 random bits: unguessable, so a client id reveals nothing and cannot be enumerated. */
function generateClientId(): string {
  return `op_${randomBytes(16).toString('base64url')}`;
}

async function insertClient(db: Queryable, metadata: ClientMetadata, apiVersion: number): Promise<ClientSummary> {
  const { rows } = await db.query<ClientRow>(
    `INSERT INTO oauth_clients (client_id, client_name, metadata, api_version) VALUES ($1, $2, $3, $4)
     RETURNING ${SUMMARY_COLUMNS}`,
    [metadata.client_id, metadata.client_name, JSON.stringify(metadata), apiVersion],
  );
  return toSummary(rows[0]!);
}

/** An authorization-code client without a secret (a browser or native app). */
export async function createPublicClient(db: Queryable, input: PublicClientInput, clientId = generateClientId()): Promise<ClientSummary> {
  const metadata = buildPublicClientMetadata(clientId, input);
  return insertClient(db, metadata, checkClientApiVersion(input.apiVersion));
}

/** 32 random bytes: a client secret, shown once; only its hash is kept. */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A client-credentials client; the returned clientSecret is the only time the plaintext exists. */
export async function createConfidentialClient(
  db: Queryable,
  input: ConfidentialClientInput,
): Promise<ClientSummary & { clientSecret: string }> {
  const clientId = generateClientId();
  const clientSecret = generateClientSecret();
  // Validate before paying for the hash.
  buildConfidentialClientMetadata(clientId, '', input);
  const apiVersion = checkClientApiVersion(input.apiVersion);
  const metadata = buildConfidentialClientMetadata(clientId, await hashClientSecret(clientSecret), input);
  return { ...(await insertClient(db, metadata, apiVersion)), clientSecret };
}

/** A FAPI 2.0 client: no secret, it authenticates with its own keys (private_key_jwt). */
export async function createFapi2Client(db: Queryable, input: Fapi2ClientInput): Promise<ClientSummary> {
  const clientId = generateClientId();
  return insertClient(db, buildFapi2ClientMetadata(clientId, input), checkClientApiVersion(input.apiVersion));
}

/**
 * The keys a private_key_jwt client authenticates with from now on (jwks or jwks_uri, the other one
 * dropped); undefined when there is no such client. The provider builds the client anew from the
 * changed metadata, so the next assertion is checked against these.
 */
export async function replaceClientKeys(db: Queryable, clientId: string, keys: ClientKeys): Promise<ClientSummary | undefined> {
  const { rows } = await db.query<ClientRow>(
    `UPDATE oauth_clients SET metadata = (metadata - 'jwks' - 'jwks_uri') || $2::jsonb
     WHERE client_id = $1 RETURNING ${SUMMARY_COLUMNS}`,
    [clientId, JSON.stringify(buildClientKeysMetadata(keys))],
  );
  return rows[0] && toSummary(rows[0]);
}

export async function listClients(db: Queryable): Promise<ClientSummary[]> {
  const { rows } = await db.query<ClientRow>(`SELECT ${SUMMARY_COLUMNS} FROM oauth_clients ORDER BY created_at, client_id`);
  return rows.map(toSummary);
}

/**
 * Pins the client to another API version; undefined when there is no such client. Access tokens
 * carry the version they were issued with, so the change reaches the API with the next token.
 */
export async function setClientApiVersion(
  db: Queryable,
  clientId: string,
  apiVersion: number,
): Promise<{ client: ClientSummary; previousApiVersion: number } | undefined> {
  // `previous` is the row as it was, locked first so a concurrent change cannot slip in between.
  const { rows } = await db.query<ClientRow & { previous_api_version: number }>(
    `UPDATE oauth_clients AS client SET api_version = $2
     FROM (SELECT client_id, api_version FROM oauth_clients WHERE client_id = $1 FOR UPDATE) AS previous
     WHERE client.client_id = previous.client_id
     RETURNING client.client_id, client.client_name, client.metadata - 'client_secret' AS metadata, client.api_version,
       client.created_at, client.disabled_at, client.previous_secret_expires_at, previous.api_version AS previous_api_version`,
    [clientId, checkClientApiVersion(apiVersion)],
  );
  const row = rows[0];
  return row && { client: toSummary(row), previousApiVersion: row.previous_api_version };
}

/** The client, locked for the rest of the transaction; undefined when there is none. */
export async function findClientForUpdate(db: Queryable, clientId: string): Promise<ClientSummary | undefined> {
  const { rows } = await db.query<ClientRow>(`SELECT ${SUMMARY_COLUMNS} FROM oauth_clients WHERE client_id = $1 FOR UPDATE`, [clientId]);
  return rows[0] && toSummary(rows[0]);
}

/** Disables the client (from now) or enables it again. */
export async function setClientDisabled(db: Queryable, clientId: string, disabled: boolean): Promise<ClientSummary> {
  const { rows } = await db.query<ClientRow>(
    `UPDATE oauth_clients SET disabled_at = CASE WHEN $2::boolean THEN now() END WHERE client_id = $1 RETURNING ${SUMMARY_COLUMNS}`,
    [clientId, disabled],
  );
  return toSummary(rows[0]!);
}

export async function deleteClientRow(db: Queryable, clientId: string): Promise<void> {
  await db.query('DELETE FROM oauth_clients WHERE client_id = $1', [clientId]);
}

/**
 * A new secret (its scrypt hash) authenticates the client from now on; the one it replaces for
 * `graceSeconds` more (0: not at all). A secret kept by an earlier rotation is dropped.
 */
export async function replaceClientSecret(
  db: Queryable,
  clientId: string,
  secretHash: string,
  graceSeconds: number,
): Promise<ClientSummary> {
  // SET expressions read the row as it was: the previous secret is the one being replaced.
  const { rows } = await db.query<ClientRow>(
    `UPDATE oauth_clients SET metadata = jsonb_set(metadata, '{client_secret}', to_jsonb($2::text)),
       previous_secret_hash = CASE WHEN $3::int > 0 THEN metadata ->> 'client_secret' END,
       previous_secret_expires_at = CASE WHEN $3::int > 0 THEN now() + make_interval(secs => $3::int) END
     WHERE client_id = $1 RETURNING ${SUMMARY_COLUMNS}`,
    [clientId, secretHash, graceSeconds],
  );
  return toSummary(rows[0]!);
}

/** The API version a registered client is pinned to, and whether it is disabled; undefined when no such client is registered. */
export async function findClientApiVersion(
  db: Queryable,
  clientId: string,
): Promise<{ apiVersion: number; disabled: boolean } | undefined> {
  const { rows } = await db.query<{ apiVersion: number; disabled: boolean }>(
    'SELECT api_version AS "apiVersion", disabled_at IS NOT NULL AS disabled FROM oauth_clients WHERE client_id = $1',
    [clientId],
  );
  return rows[0];
}

/**
 * The provider's metadata of one client (client_secret is the hash), or undefined, also when the
 * client is disabled: the provider then knows no such client (invalid_client). The client_id
 * column is authoritative. Beside it, client metadata the provider keeps (extraClientMetadata in
 * provider.ts): the pinned version as `api_version`, so issuing a token needs no second query, and
 * after a rotation the previous secret's hash and when it stops authenticating (epoch seconds).
 */
export async function findClientMetadata(db: Queryable, clientId: string): Promise<ClientMetadata | undefined> {
  const { rows } = await db.query<{
    client_id: string;
    metadata: ClientMetadata;
    api_version: number;
    previous_secret_hash: string | null;
    previous_secret_expires_at: string | null;
  }>(
    `SELECT client_id, metadata, api_version, previous_secret_hash, previous_secret_expires_at
     FROM oauth_clients WHERE client_id = $1 AND disabled_at IS NULL`,
    [clientId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const metadata: ClientMetadata = { ...row.metadata, client_id: row.client_id, api_version: row.api_version };
  if (row.previous_secret_hash !== null && row.previous_secret_expires_at !== null) {
    metadata.previous_client_secret = row.previous_secret_hash;
    metadata.previous_client_secret_expires_at = Math.floor(Date.parse(row.previous_secret_expires_at) / 1000);
  }
  return metadata;
}
