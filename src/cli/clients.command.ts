// `orderpay clients create | list`: OAuth clients of the authorization server. JSON output uses
// the names of an RFC 7591 client information response (client_id, client_secret, …).
import { buildConfidentialClientMetadata, buildPublicClientMetadata } from '../auth/clients.rules.ts';
import { createConfidentialClient, createPublicClient, listClients, type ClientSummary } from '../auth/clients.store.ts';
import { loadConfig } from '../config.ts';
import { parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';

export const CLIENTS_USAGE = `  clients create --public    a browser or native app (authorization code + PKCE, no secret)
      --name <name>
      --redirect-uri <uri>   https, or http on 127.0.0.1/[::1]/localhost; repeat for several
      --scope "<scopes>"     default: openid profile email offline_access and the customer API scopes
  clients create --confidential
                             a service (client credentials); prints its secret once
      --name <name>
      --grant client_credentials
      --scope "<scopes>"     API scopes only (orders:read orders:write products:write payments:read payments:write)
  clients list               every client (never secrets)`;

const CREATE_OPTIONS = {
  name: { type: 'string' },
  public: { type: 'boolean', default: false },
  confidential: { type: 'boolean', default: false },
  'redirect-uri': { type: 'string', multiple: true },
  grant: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
} as const;

/** RFC 7591 §3.2.1; client_secret_expires_at 0 means the secret does not expire. */
function toClientInformation(client: ClientSummary, clientSecret?: string): Record<string, unknown> {
  return {
    client_id: client.clientId,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    client_name: client.clientName,
    client_type: client.type,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    scope: client.scope,
  };
}

function describeClient(client: ClientSummary): string {
  const lines = [
    `${client.clientId}  ${client.type}  "${client.clientName}"`,
    `  grants: ${client.grantTypes.join(' ')}`,
    `  scope: ${client.scope}`,
  ];
  for (const uri of client.redirectUris) lines.push(`  redirect URI: ${uri}`);
  return lines.join('\n');
}

async function createClient(argv: string[], out: Output): Promise<void> {
  const values = parseCommandLine(argv, CREATE_OPTIONS);
  const redirectUris = values['redirect-uri'] ?? [];
  const scopes = values.scope ?? [];
  if (!values.name) throw new UsageError('clients create needs --name');
  if (values.public === values.confidential) throw new UsageError('clients create needs exactly one of --public or --confidential');
  if (values.public && values.grant)
    throw new UsageError('a public client always has the authorization_code and refresh_token grants; drop --grant');
  if (values.confidential && redirectUris.length)
    throw new UsageError('a client-credentials client has no redirect URIs; drop --redirect-uri');
  if (values.confidential && !values.grant) throw new UsageError('a confidential client needs --grant client_credentials');
  if (values.confidential && !scopes.length) throw new UsageError('a confidential client needs --scope with its API scopes');
  const name = values.name;
  const grantTypes = values.grant ?? [];
  // Refuse bad metadata (ClientMetadataError, exit 2) before opening the database; the store checks again.
  if (values.public) buildPublicClientMetadata('', { name, redirectUris, scopes });
  else buildConfidentialClientMetadata('', '', { name, grantTypes, scopes });
  const config = loadConfig();
  if (values.public) {
    const client = await withMigratedDatabase(config, (db) => createPublicClient(db, { name, redirectUris, scopes }));
    out.print(`Created public client\n${describeClient(client)}`, toClientInformation(client));
    return;
  }
  const { clientSecret, ...client } = await withMigratedDatabase(config, (db) =>
    createConfidentialClient(db, { name, grantTypes, scopes }),
  );
  out.print(
    `Created confidential client\n${describeClient(client)}\n  client_secret: ${clientSecret}\nStore the secret now: it is shown only this once (orderpay keeps only its hash).`,
    toClientInformation(client, clientSecret),
  );
}

async function printClients(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const clients = await withMigratedDatabase(loadConfig(), listClients);
  out.print(clients.length ? clients.map(describeClient).join('\n') : 'No clients', {
    clients: clients.map((c) => toClientInformation(c)),
  });
}

/** argv: what follows `clients`. */
export async function runClientsCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createClient(rest, out);
  if (word === 'list') return printClients(rest, out);
  throw new UsageError(
    'usage: orderpay clients create --name N (--public --redirect-uri URI … | --confidential --grant client_credentials --scope S) | orderpay clients list',
  );
}
