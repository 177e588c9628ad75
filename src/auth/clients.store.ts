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
  /** What the client's unversioned requests get (src/core/api-versions.ts). */
  apiVersion: number;
  createdAt: string;
}

interface ClientRow {
  client_id: string;
  client_name: string;
  metadata: ClientMetadata;
  api_version: number;
  created_at: string;
}

/** The columns a ClientSummary is made of; never the secret's hash. */
const SUMMARY_COLUMNS = `client_id, client_name, metadata - 'client_secret' AS metadata, api_version, created_at`;

const toSummary = ({ client_id, client_name, metadata, api_version, created_at }: ClientRow): ClientSummary => ({
  clientId: client_id,
  clientName: client_name,
  type: metadata.token_endpoint_auth_method === 'none' ? 'public' : 'confidential',
  grantTypes: (metadata.grant_types as string[] | undefined) ?? [],
  redirectUris: (metadata.redirect_uris as string[] | undefined) ?? [],
  scope: (metadata.scope as string | undefined) ?? '',
  tokenEndpointAuthMethod: String(metadata.token_endpoint_auth_method),
  apiVersion: api_version,
  createdAt: created_at,
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

/** A client-credentials client; the returned clientSecret is the only time the plaintext exists. */
export async function createConfidentialClient(
  db: Queryable,
  input: ConfidentialClientInput,
): Promise<ClientSummary & { clientSecret: string }> {
  const clientId = generateClientId();
  const clientSecret = randomBytes(32).toString('base64url');
  // Validate before paying for the hash.
  buildConfidentialClientMetadata(clientId, '', input);
  const apiVersion = checkClientApiVersion(input.apiVersion);
  const metadata = buildConfidentialClientMetadata(clientId, await hashClientSecret(clientSecret), input);
  return { ...(await insertClient(db, metadata, apiVersion)), clientSecret };
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
       client.created_at, previous.api_version AS previous_api_version`,
    [clientId, checkClientApiVersion(apiVersion)],
  );
  const row = rows[0];
  return row && { client: toSummary(row), previousApiVersion: row.previous_api_version };
}

/** The API version a registered client is pinned to; undefined when no such client is registered. */
export async function findClientApiVersion(db: Queryable, clientId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ api_version: number }>('SELECT api_version FROM oauth_clients WHERE client_id = $1', [clientId]);
  return rows[0]?.api_version;
}

/**
 * The provider's metadata of one client (client_secret is the hash), or undefined; the client_id
 * column is authoritative. The pinned version rides along as `api_version`, client metadata the
 * provider keeps (extraClientMetadata in provider.ts), so issuing a token needs no second query.
 */
export async function findClientMetadata(db: Queryable, clientId: string): Promise<ClientMetadata | undefined> {
  const { rows } = await db.query<{ client_id: string; metadata: ClientMetadata; api_version: number }>(
    'SELECT client_id, metadata, api_version FROM oauth_clients WHERE client_id = $1',
    [clientId],
  );
  const row = rows[0];
  return row && { ...row.metadata, client_id: row.client_id, api_version: row.api_version };
}
