// `orderpay clients create | list | set-api-version`: OAuth clients of the authorization server
// and the API version each is pinned to. JSON output uses the names of an RFC 7591 client
// information response (client_id, client_secret, …), plus api_version.
import { buildConfidentialClientMetadata, buildPublicClientMetadata, checkClientApiVersion } from '../auth/clients.rules.ts';
import {
  createConfidentialClient,
  createPublicClient,
  listClients,
  setClientApiVersion,
  type ClientSummary,
} from '../auth/clients.store.ts';
import { TOKEN_TTL } from '../auth/token-lifetimes.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { loadConfig } from '../config.ts';
import { describeDatabase, parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';

export const CLIENTS_USAGE = `  clients create --public    a browser or native app (authorization code + PKCE, no secret)
      --name <name>
      --redirect-uri <uri>   https, or http on 127.0.0.1/[::1]/localhost; repeat for several
      --scope "<scopes>"     default: openid profile email offline_access and the customer API scopes
  clients create --confidential
                             a service (client credentials); prints its secret once
      --name <name>
      --grant client_credentials
      --scope "<scopes>"     API scopes only (orders:read orders:write products:write payments:read payments:write)
      --api-version <n>      either kind: the API version its unversioned requests get
                             (${API_VERSION_NUMBERS.join(', ')}; default: the latest, ${LATEST_API_VERSION})
  clients list               every client and its API version (never secrets)
  clients set-api-version    pin a client to another API version; its tokens issued from
                             now on carry it (those issued before keep theirs until they expire)
      --client-id <id>
      --api-version <n>`;

const CREATE_OPTIONS = {
  name: { type: 'string' },
  public: { type: 'boolean', default: false },
  confidential: { type: 'boolean', default: false },
  'redirect-uri': { type: 'string', multiple: true },
  grant: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
  'api-version': { type: 'string' },
} as const;

const SET_API_VERSION_OPTIONS = {
  'client-id': { type: 'string' },
  'api-version': { type: 'string' },
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
    api_version: client.apiVersion,
  };
}

function describeClient(client: ClientSummary): string {
  const lines = [
    `${client.clientId}  ${client.type}  "${client.clientName}"`,
    `  grants: ${client.grantTypes.join(' ')}`,
    `  scope: ${client.scope}`,
    `  API version: v${client.apiVersion}`,
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
  const apiVersion = checkClientApiVersion(values['api-version']);
  const config = loadConfig();
  if (values.public) {
    const client = await withMigratedDatabase(config, (db) => createPublicClient(db, { name, redirectUris, scopes, apiVersion }));
    out.print(`Created public client\n${describeClient(client)}`, toClientInformation(client));
    return;
  }
  const { clientSecret, ...client } = await withMigratedDatabase(config, (db) =>
    createConfidentialClient(db, { name, grantTypes, scopes, apiVersion }),
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

/** The pin travels in access tokens, so it reaches the API with the client's next token. */
async function pinApiVersion(argv: string[], out: Output): Promise<void> {
  const { 'client-id': clientId, 'api-version': requested } = parseCommandLine(argv, SET_API_VERSION_OPTIONS);
  if (!clientId || requested === undefined) throw new UsageError('usage: orderpay clients set-api-version --client-id C --api-version N');
  const apiVersion = checkClientApiVersion(requested);
  const changed = await withMigratedDatabase(loadConfig(), (db) => setClientApiVersion(db, clientId, apiVersion));
  if (!changed) throw new UsageError(`no client with id ${clientId} in ${describeDatabase(loadConfig())}`);
  const { client, previousApiVersion } = changed;
  const information = { ...toClientInformation(client), previous_api_version: previousApiVersion };
  if (previousApiVersion === apiVersion) {
    out.print(`${client.clientId} "${client.clientName}" is already pinned to API v${apiVersion}; nothing changed.`, information);
    return;
  }
  out.print(
    `${client.clientId} "${client.clientName}" is now pinned to API v${apiVersion} (was v${previousApiVersion}).
Its access tokens issued from now on carry api_version ${apiVersion}: its unversioned requests get v${apiVersion} from its next token.
Tokens issued before keep v${previousApiVersion} until they expire (the authorization server's within ${TOKEN_TTL.AccessToken / 60} minutes).`,
    information,
  );
}

/** argv: what follows `clients`. */
export async function runClientsCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createClient(rest, out);
  if (word === 'list') return printClients(rest, out);
  if (word === 'set-api-version') return pinApiVersion(rest, out);
  throw new UsageError(
    'usage: orderpay clients create --name N (--public --redirect-uri URI … | --confidential --grant client_credentials --scope S) [--api-version N] | orderpay clients list | orderpay clients set-api-version --client-id C --api-version N',
  );
}
