// `orderpay clients create | list | set-api-version | disable | enable | delete | rotate-secret |
// set-keys`: OAuth clients of the authorization server, the profile and API version each is held
// to, and operators' control of them. JSON output uses the names of an RFC 7591 client information
// response (client_id, client_secret, jwks, …), plus profile, api_version and status.
import { readFile } from 'node:fs/promises';
import { SCOPES } from '../core/scopes.ts';
import {
  buildConfidentialClientMetadata,
  buildPublicClientMetadata,
  checkClientApiVersion,
  ClientMetadataError,
  DEFAULT_SECRET_GRACE,
  parseSecretGrace,
} from '../auth/clients.rules.ts';
import { deleteClient, disableClient, enableClient, replaceKeys, rotateClientSecret, type ClientChange } from '../auth/clients.service.ts';
import {
  createConfidentialClient,
  createFapi2Client,
  createPublicClient,
  listClients,
  setClientApiVersion,
  type ClientSummary,
} from '../auth/clients.store.ts';
import { buildFapi2ClientMetadata, checkClientProfile, moneyScopesWithheld, type ClientKeys } from '../auth/fapi2-profile.ts';
import { CONSOLE_CLIENT_ID } from '../auth/console-client.ts';
import { TOKEN_TTL } from '../auth/token-lifetimes.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/db.ts';
import { describeDatabase, parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';

export const CLIENTS_USAGE = `  clients create --public    a browser or native app (authorization code + PKCE, no secret)
      --name <name>
      --redirect-uri <uri>   https, or http on 127.0.0.1/[::1]/localhost; repeat for several
      --scope "<scopes>"     default: openid profile email offline_access and the customer API scopes
  clients create --confidential
                             a service (client credentials) or a server-side app acting for
                             users (authorization code + PKCE); prints its secret once
      --name <name>
      --grant <grant>        client_credentials, authorization_code, or both (repeat)
      --redirect-uri <uri>   with authorization_code: as for a public client
      --scope "<scopes>"     API scopes (${SCOPES.join(' ')}); with
                             authorization_code also openid profile email offline_access
      --profile fapi2        the FAPI 2.0 Security Profile (docs/fapi.md): no secret; it
                             authenticates with private_key_jwt, pushes its authorization
                             requests (PAR) and gets DPoP-bound access tokens
      --jwks-file <file>     with fapi2: its public keys, a JWK Set (or --jwks-uri <https URL>)
      --api-version <n>      any kind: the API version its unversioned requests get
                             (${API_VERSION_NUMBERS.join(', ')}; default: the latest, ${LATEST_API_VERSION})
  clients list               every client, its API version and status (never secrets)
  clients set-api-version    pin a client to another API version; its tokens issued from
                             now on carry it (those issued before keep theirs until they expire)
      --client-id <id>
      --api-version <n>
  clients disable            the client can get no token: its grants and refresh tokens
      --client-id <id>       end, and the API refuses its access tokens
  clients enable             it can get tokens again; tokens from before stay refused
      --client-id <id>
  clients delete             remove the client with its grants; its access tokens are
      --client-id <id>       refused; payments and events keep naming its id
  clients rotate-secret      a new secret for a confidential client, printed once; the
      --client-id <id>       previous one still works during the grace period
      --grace <duration>     s, m, h or d, at most 30d (default ${DEFAULT_SECRET_GRACE}; 0: it stops at once)
  clients set-keys           the public keys a fapi2 client authenticates with from now on
      --client-id <id>       (register the new key beside the old one first to rotate
      --jwks-file <file>     without a gap), or its --jwks-uri <https URL>`;

const CREATE_OPTIONS = {
  name: { type: 'string' },
  public: { type: 'boolean', default: false },
  confidential: { type: 'boolean', default: false },
  'redirect-uri': { type: 'string', multiple: true },
  grant: { type: 'string', multiple: true },
  scope: { type: 'string', multiple: true },
  'api-version': { type: 'string' },
  profile: { type: 'string' },
  'jwks-file': { type: 'string' },
  'jwks-uri': { type: 'string' },
} as const;

const KEYS_OPTIONS = { 'jwks-file': { type: 'string' }, 'jwks-uri': { type: 'string' } } as const;

const SET_API_VERSION_OPTIONS = {
  'client-id': { type: 'string' },
  'api-version': { type: 'string' },
} as const;

const CLIENT_ID_OPTION = { 'client-id': { type: 'string' } } as const;

const epochSeconds = (at: string) => Math.floor(Date.parse(at) / 1000);

/** The previous secret's end, while it still authenticates. */
const previousSecretUntil = (client: ClientSummary) =>
  client.previousSecretExpiresAt !== null && Date.parse(client.previousSecretExpiresAt) > Date.now()
    ? client.previousSecretExpiresAt
    : undefined;

/**
 * RFC 7591 §3.2.1; client_secret_expires_at 0 means the secret does not expire. Beside it: the API
 * version, whether the client is active or disabled, and while the secret before the last rotation
 * still authenticates, until when (epoch seconds, like client_secret_expires_at).
 */
function toClientInformation(client: ClientSummary, clientSecret?: string): Record<string, unknown> {
  const previousUntil = previousSecretUntil(client);
  return {
    client_id: client.clientId,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: epochSeconds(client.createdAt),
    client_name: client.clientName,
    client_type: client.type,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.keys === undefined ? {} : 'jwksUri' in client.keys ? { jwks_uri: client.keys.jwksUri } : { jwks: client.keys.jwks }),
    profile: client.profile,
    scope: client.scope,
    api_version: client.apiVersion,
    status: client.disabledAt === null ? 'active' : 'disabled',
    ...(previousUntil === undefined ? {} : { previous_client_secret_expires_at: epochSeconds(previousUntil) }),
  };
}

function describeKeys(keys: NonNullable<ClientSummary['keys']>): string {
  if ('jwksUri' in keys) return `jwks_uri ${keys.jwksUri}`;
  const kids = keys.jwks.keys.map((key, index) => (typeof key.kid === 'string' ? key.kid : `#${index + 1}`));
  return `${kids.length} by value (${kids.join(', ')})`;
}

/** --jwks-file or --jwks-uri, exactly one; read and parsed here, checked by the rules. */
async function readClientKeys(values: { 'jwks-file'?: string; 'jwks-uri'?: string }): Promise<ClientKeys> {
  const { 'jwks-file': file, 'jwks-uri': jwksUri } = values;
  if ((file === undefined) === (jwksUri === undefined))
    throw new UsageError("give the client's public keys with exactly one of --jwks-file or --jwks-uri");
  if (jwksUri !== undefined) return { jwksUri };
  let text: string;
  try {
    text = await readFile(file!, 'utf8');
  } catch (error) {
    throw new UsageError(`--jwks-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
  }
  try {
    return { jwks: JSON.parse(text) };
  } catch {
    throw new UsageError(`--jwks-file ${file} is not JSON: it must hold a JWK Set, {"keys": [...]}`);
  }
}

/** The scopes ORDERPAY_FAPI2_FOR_PAYMENTS keeps from the client, as configured for this command. */
const withheldFrom = (client: ClientSummary, fapi2ForPayments: boolean) =>
  moneyScopesWithheld({ isPublic: client.type === 'public', profile: client.profile, scope: client.scope }, fapi2ForPayments);

function describeClient(client: ClientSummary, fapi2ForPayments = false): string {
  const withheld = withheldFrom(client, fapi2ForPayments);
  const lines = [
    `${client.clientId}  ${client.type}  "${client.clientName}"${client.disabledAt === null ? '' : `  disabled since ${client.disabledAt}`}`,
    `  grants: ${client.grantTypes.join(' ')}`,
    `  profile: ${client.profile === 'fapi2' ? 'fapi2 (FAPI 2.0: private_key_jwt, PAR, DPoP)' : client.profile}`,
    ...(client.keys === undefined ? [] : [`  keys: ${describeKeys(client.keys)}`]),
    `  scope: ${client.scope}`,
    ...(withheld.length ? [`  withheld: ${withheld.join(' ')} (ORDERPAY_FAPI2_FOR_PAYMENTS: only on the fapi2 profile)`] : []),
    `  API version: v${client.apiVersion}`,
  ];
  for (const uri of client.redirectUris) lines.push(`  redirect URI: ${uri}`);
  const previousUntil = previousSecretUntil(client);
  if (previousUntil !== undefined) lines.push(`  previous secret: still accepted until ${previousUntil}`);
  return lines.join('\n');
}

/** What each kind of client refuses on the command line before anything is read or written. */
function refuseMisplacedOptions(values: ReturnType<typeof parseCreateOptions>): void {
  if (!values.name) throw new UsageError('clients create needs --name');
  if (values.public === values.confidential) throw new UsageError('clients create needs exactly one of --public or --confidential');
  const keysGiven = values['jwks-file'] !== undefined || values['jwks-uri'] !== undefined;
  if (values.public) {
    if (values.grant) throw new UsageError('a public client always has the authorization_code and refresh_token grants; drop --grant');
    if (values.profile === 'fapi2')
      throw new UsageError('a FAPI 2.0 client is confidential (FAPI 2.0 §5.3.2.1 item 3): use --confidential');
    if (keysGiven) throw new UsageError('a public client has no keys; drop --jwks-file/--jwks-uri');
    return;
  }
  if (!values.grant) throw new UsageError('a confidential client needs --grant client_credentials and/or --grant authorization_code');
  if (!values.grant.includes('authorization_code') && values['redirect-uri']?.length)
    throw new UsageError('a client-credentials client has no redirect URIs; drop --redirect-uri');
  if (!values.scope?.length) throw new UsageError('a confidential client needs --scope with its API scopes');
  if (values.profile !== 'fapi2' && keysGiven)
    throw new UsageError('only a --profile fapi2 client authenticates with keys; drop --jwks-file/--jwks-uri');
}

const parseCreateOptions = (argv: string[]) => parseCommandLine(argv, CREATE_OPTIONS);

async function createClient(argv: string[], out: Output): Promise<void> {
  const values = parseCreateOptions(argv);
  refuseMisplacedOptions(values);
  const name = values.name!;
  const redirectUris = values['redirect-uri'] ?? [];
  const scopes = values.scope ?? [];
  const grantTypes = values.grant ?? [];
  const profile = checkClientProfile(values.profile ?? 'oauth2.1');
  const apiVersion = checkClientApiVersion(values['api-version']);
  const config = loadConfig();
  if (values.public) {
    buildPublicClientMetadata('', { name, redirectUris, scopes });
    const client = await withMigratedDatabase(config, (db) => createPublicClient(db, { name, redirectUris, scopes, apiVersion }));
    out.print(`Created public client\n${describeClient(client)}`, toClientInformation(client));
    return;
  }
  if (profile === 'fapi2') {
    const input = { name, grantTypes, redirectUris, scopes, apiVersion, keys: await readClientKeys(values) };
    // Refuse bad metadata (ClientMetadataError, exit 2) before opening the database; the store checks again.
    buildFapi2ClientMetadata('', input);
    const client = await withMigratedDatabase(config, (db) => createFapi2Client(db, input));
    out.print(
      `Created FAPI 2.0 client\n${describeClient(client)}\nIt has no secret: it authenticates with private_key_jwt, signed by one of its keys (docs/fapi.md).`,
      toClientInformation(client),
    );
    return;
  }
  buildConfidentialClientMetadata('', '', { name, grantTypes, redirectUris, scopes });
  const money = moneyScopesWithheld({ isPublic: false, profile, scope: scopes.join(' ') }, config.fapi2ForPayments);
  if (money.length) {
    throw new ClientMetadataError(
      `ORDERPAY_FAPI2_FOR_PAYMENTS is on: a confidential client holds ${money.join(', ')} only on the FAPI 2.0 profile (--profile fapi2)`,
    );
  }
  const { clientSecret, ...client } = await withMigratedDatabase(config, (db) =>
    createConfidentialClient(db, { name, grantTypes, redirectUris, scopes, apiVersion }),
  );
  out.print(
    `Created confidential client\n${describeClient(client)}\n  client_secret: ${clientSecret}\nStore the secret now: it is shown only this once (orderpay keeps only its hash).`,
    toClientInformation(client, clientSecret),
  );
}

async function printClients(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const config = loadConfig();
  const clients = await withMigratedDatabase(config, listClients);
  const withheld = (client: ClientSummary) => withheldFrom(client, config.fapi2ForPayments);
  out.print(clients.length ? clients.map((client) => describeClient(client, config.fapi2ForPayments)).join('\n') : 'No clients', {
    clients: clients.map((client) => ({
      ...toClientInformation(client),
      ...(withheld(client).length ? { withheld_scope: withheld(client).join(' ') } : {}),
    })),
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

/** The refusals every client command shares: an unknown client, and the /docs or /console page's built-in one. */
function refuseMissingClient(outcome: 'not-found' | 'built-in', clientId: string): never {
  const config = loadConfig();
  if (outcome === 'not-found') throw new UsageError(`no client with id ${clientId} in ${describeDatabase(config)}`);
  const [page, setting] = clientId === CONSOLE_CLIENT_ID ? ['/console', 'ORDERPAY_CONSOLE'] : ['/docs', 'ORDERPAY_DOCS_CLIENT'];
  throw new UsageError(
    `${clientId} is the ${page} page's built-in client, declared by the configuration rather than registered: commands cannot change it; ${setting}=false turns it off`,
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What each change says once it has been made, and when there was nothing to do. */
const CLIENT_COMMANDS = {
  disable: {
    change: disableClient,
    changed: (client: ClientSummary, revokedGrants: number) =>
      `Disabled ${client.clientId} "${client.clientName}": it can get no token; ${plural(revokedGrants, 'grant')} ended with their refresh tokens, and the API refuses its access tokens (every process within about a second).`,
    unchanged: (client: ClientSummary) => `${client.clientId} "${client.clientName}" is already disabled; nothing changed.`,
  },
  enable: {
    change: enableClient,
    changed: (client: ClientSummary) =>
      `Enabled ${client.clientId} "${client.clientName}": it can get tokens again. Tokens issued before it was disabled stay refused.`,
    unchanged: (client: ClientSummary) => `${client.clientId} "${client.clientName}" is already active; nothing changed.`,
  },
  delete: {
    change: deleteClient,
    changed: (client: ClientSummary, revokedGrants: number) =>
      `Deleted ${client.clientId} "${client.clientName}": ${plural(revokedGrants, 'grant')} ended with their refresh tokens, and the API refuses its access tokens until they expire. Payments and events that name it keep its id.`,
    // A deleted client is not found again: deleting changes something or refuses.
    unchanged: undefined,
  },
} satisfies Record<
  string,
  {
    change: (db: Db, clientId: string) => Promise<ClientChange>;
    changed: (client: ClientSummary, revokedGrants: number) => string;
    unchanged: ((client: ClientSummary) => string) | undefined;
  }
>;

async function changeClient(command: keyof typeof CLIENT_COMMANDS, argv: string[], out: Output): Promise<void> {
  const { 'client-id': clientId } = parseCommandLine(argv, CLIENT_ID_OPTION);
  if (!clientId) throw new UsageError(`usage: orderpay clients ${command} --client-id C`);
  const { change, changed, unchanged } = CLIENT_COMMANDS[command];
  const result = await withMigratedDatabase(loadConfig(), (db) => change(db, clientId));
  if (result.outcome === 'not-found' || result.outcome === 'built-in') refuseMissingClient(result.outcome, clientId);
  const revokedGrants = result.outcome === 'changed' ? result.revokedGrants : 0;
  const information = toClientInformation(result.client);
  out.print(result.outcome === 'changed' || !unchanged ? changed(result.client, revokedGrants) : unchanged(result.client), {
    ...information,
    ...(command === 'delete' ? { status: 'deleted' } : {}),
    changed: result.outcome === 'changed',
    revoked_grants: revokedGrants,
  });
}

/** A new secret, shown once as at creation; the previous one works until the grace period ends. */
async function rotateSecret(argv: string[], out: Output): Promise<void> {
  const values = parseCommandLine(argv, { ...CLIENT_ID_OPTION, grace: { type: 'string' } });
  const clientId = values['client-id'];
  if (!clientId) throw new UsageError('usage: orderpay clients rotate-secret --client-id C [--grace 24h]');
  const graceSeconds = parseSecretGrace(values.grace ?? DEFAULT_SECRET_GRACE);
  const result = await withMigratedDatabase(loadConfig(), (db) => rotateClientSecret(db, clientId, graceSeconds));
  if (result.outcome === 'not-found' || result.outcome === 'built-in') refuseMissingClient(result.outcome, clientId);
  if (result.outcome === 'public') throw new UsageError(`${clientId} is a public client: it has no secret to rotate`);
  if (result.outcome === 'no-secret') {
    throw new UsageError(
      `${clientId} authenticates with its keys (private_key_jwt): it has no secret to rotate; orderpay clients set-keys replaces its keys`,
    );
  }
  const { client, clientSecret } = result;
  const previousUntil = previousSecretUntil(client);
  out.print(
    `Rotated the secret of ${client.clientId} "${client.clientName}"
  client_secret: ${clientSecret}
Store the secret now: it is shown only this once (orderpay keeps only its hash).
${previousUntil === undefined ? 'The previous secret no longer works.' : `The previous secret still works until ${previousUntil}; then only this one does.`}`,
    toClientInformation(client, clientSecret),
  );
}

/** The keys a fapi2 client's next assertion must be signed by; the provider builds the client anew. */
async function setKeys(argv: string[], out: Output): Promise<void> {
  const values = parseCommandLine(argv, { ...CLIENT_ID_OPTION, ...KEYS_OPTIONS });
  const clientId = values['client-id'];
  if (!clientId) throw new UsageError('usage: orderpay clients set-keys --client-id C (--jwks-file F | --jwks-uri URL)');
  const keys = await readClientKeys(values);
  const result = await withMigratedDatabase(loadConfig(), (db) => replaceKeys(db, clientId, keys));
  if (result.outcome === 'not-found' || result.outcome === 'built-in') refuseMissingClient(result.outcome, clientId);
  if (result.outcome === 'no-keys') {
    throw new UsageError(
      `${clientId} authenticates with ${result.client.tokenEndpointAuthMethod}, not with keys (only a --profile fapi2 client does)`,
    );
  }
  out.print(
    `${result.client.clientId} "${result.client.clientName}" authenticates with these keys from now on: ${describeKeys(result.client.keys!)}.`,
    toClientInformation(result.client),
  );
}

/** argv: what follows `clients`. */
export async function runClientsCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createClient(rest, out);
  if (word === 'list') return printClients(rest, out);
  if (word === 'set-api-version') return pinApiVersion(rest, out);
  if (word === 'disable' || word === 'enable' || word === 'delete') return changeClient(word, rest, out);
  if (word === 'rotate-secret') return rotateSecret(rest, out);
  if (word === 'set-keys') return setKeys(rest, out);
  throw new UsageError(
    'usage: orderpay clients create --name N (--public --redirect-uri URI … | --confidential --grant G … --scope S [--redirect-uri URI …] [--profile fapi2 --jwks-file F]) [--api-version N] | orderpay clients list | orderpay clients set-api-version --client-id C --api-version N | orderpay clients disable|enable|delete --client-id C | orderpay clients rotate-secret --client-id C [--grace 24h] | orderpay clients set-keys --client-id C (--jwks-file F | --jwks-uri URL)',
  );
}
