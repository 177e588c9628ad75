// Registered OAuth clients in SQL: oidc-provider metadata in oauth_clients.metadata. A
// confidential client's secret is stored as an scrypt hash and shown to its creator once.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import {
  buildConfidentialClientMetadata,
  buildPublicClientMetadata,
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
  createdAt: string;
}

interface ClientRow {
  client_id: string;
  client_name: string;
  metadata: ClientMetadata;
  created_at: string;
}

const toSummary = ({ client_id, client_name, metadata, created_at }: ClientRow): ClientSummary => ({
  clientId: client_id,
  clientName: client_name,
  type: metadata.token_endpoint_auth_method === 'none' ? 'public' : 'confidential',
  grantTypes: (metadata.grant_types as string[] | undefined) ?? [],
  redirectUris: (metadata.redirect_uris as string[] | undefined) ?? [],
  scope: (metadata.scope as string | undefined) ?? '',
  tokenEndpointAuthMethod: String(metadata.token_endpoint_auth_method),
  createdAt: created_at,
});

/** 'op_' + 128 random bits: unguessable, so a client id reveals nothing and cannot be enumerated. */
function generateClientId(): string {
  return `op_${randomBytes(16).toString('base64url')}`;
}

async function insertClient(db: Queryable, metadata: ClientMetadata): Promise<ClientSummary> {
  const { rows } = await db.query<ClientRow>(
    `INSERT INTO oauth_clients (client_id, client_name, metadata) VALUES ($1, $2, $3)
     RETURNING client_id, client_name, metadata - 'client_secret' AS metadata, created_at`,
    [metadata.client_id, metadata.client_name, JSON.stringify(metadata)],
  );
  return toSummary(rows[0]!);
}

/** An authorization-code client without a secret (a browser or native app). */
export async function createPublicClient(db: Queryable, input: PublicClientInput, clientId = generateClientId()): Promise<ClientSummary> {
  return insertClient(db, buildPublicClientMetadata(clientId, input));
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
  const metadata = buildConfidentialClientMetadata(clientId, await hashClientSecret(clientSecret), input);
  return { ...(await insertClient(db, metadata)), clientSecret };
}

export async function listClients(db: Queryable): Promise<ClientSummary[]> {
  const { rows } = await db.query<ClientRow>(
    `SELECT client_id, client_name, metadata - 'client_secret' AS metadata, created_at
     FROM oauth_clients ORDER BY created_at, client_id`,
  );
  return rows.map(toSummary);
}

/** The provider's metadata of one client (client_secret is the hash), or undefined; the client_id column is authoritative. */
export async function findClientMetadata(db: Queryable, clientId: string): Promise<ClientMetadata | undefined> {
  const { rows } = await db.query<{ client_id: string; metadata: ClientMetadata }>(
    'SELECT client_id, metadata FROM oauth_clients WHERE client_id = $1',
    [clientId],
  );
  const row = rows[0];
  return row && { ...row.metadata, client_id: row.client_id };
}
