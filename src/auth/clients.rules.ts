// What an OAuth client may be registered with: redirect URIs, scopes, the API version it is pinned
// to, and the oidc-provider metadata of a public (authorization code + PKCE) client, a confidential
// one (client secret; client credentials, authorization code or both), or a confidential client of
// the FAPI 2.0 Security Profile (private_key_jwt, PAR, DPoP: ./fapi2-clients.rules.ts).
import { API_VERSION_NUMBERS, isApiVersion, LATEST_API_VERSION } from '../core/api-versions.ts';
import { SCOPES, STAFF_ONLY_SCOPES } from '../core/scopes.ts';
import { isLoopbackHost } from '../core/loopback.ts';

/** Every scope a client may be registered for. */
export const CLIENT_SCOPES = ['openid', 'profile', 'email', 'offline_access', ...SCOPES] as const;
/** A client-credentials client acts for itself: API scopes only, no identity or refresh. */
export const SERVICE_CLIENT_SCOPES: readonly string[] = SCOPES;
/** A public client's scopes when none are given: everything but the staff-only products:write. */
export const DEFAULT_PUBLIC_CLIENT_SCOPES: readonly string[] = CLIENT_SCOPES.filter((s) => !STAFF_ONLY_SCOPES.has(s));

/** Thrown for client metadata that cannot be registered. */
export class ClientMetadataError extends Error {}

/**
 * RFC 6749 §3.1.2: absolute, no fragment. RFC 9700 §2.1 / OAuth 2.1: https, except plain http on
 * a loopback host for native apps (RFC 8252 §7.3). Returned exactly as given: matching is exact.
 */
export function checkRedirectUri(uri: string): string {
  const parsed = URL.parse(uri);
  // The authority must be spelt out: URL reads "https:host" as "https://host/", but the provider
  // compares the URI a client sends with this string byte for byte.
  const authorityMissing = /^https?:/i.test(uri) && !/^https?:\/\/[^/?#]/i.test(uri);
  if (!parsed || authorityMissing) throw new ClientMetadataError(`redirect URI "${uri}" is not an absolute URI`);
  if (uri.includes('#')) throw new ClientMetadataError(`redirect URI "${uri}" must not contain a fragment`);
  if (parsed.username || parsed.password) throw new ClientMetadataError(`redirect URI "${uri}" must not contain credentials`);
  if (parsed.protocol === 'https:') return uri;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return uri;
  if (parsed.protocol === 'http:') {
    throw new ClientMetadataError(`redirect URI "${uri}" must use https (plain http only on 127.0.0.1, [::1] or localhost)`);
  }
  throw new ClientMetadataError(`redirect URI "${uri}" must use https (or http on a loopback host), not ${parsed.protocol.slice(0, -1)}`);
}

/** Space-separated scope strings → a de-duplicated list, each from `allowed`. */
export function parseClientScopes(scopes: readonly string[], allowed: readonly string[], what: string): string[] {
  const list = [...new Set(scopes.flatMap((s) => s.split(' ')).filter(Boolean))];
  const refused = list.filter((s) => !allowed.includes(s));
  if (refused.length) throw new ClientMetadataError(`${what} cannot have scope ${refused.join(', ')}; allowed: ${allowed.join(' ')}`);
  return list;
}

/**
 * The API version a client's unversioned requests get: one this server speaks, the latest when
 * none is named (a new integration starts on the newest contract and keeps it). A string (a
 * command-line value) counts only as decimal digits.
 */
export function checkClientApiVersion(version: number | string = LATEST_API_VERSION): number {
  let parsed = Number.NaN;
  if (typeof version === 'number') parsed = version;
  else if (/^\d{1,9}$/.test(version)) parsed = Number(version);
  if (!isApiVersion(parsed)) {
    throw new ClientMetadataError(`API version ${version} is not supported; supported: ${API_VERSION_NUMBERS.join(', ')}`);
  }
  return parsed;
}

export interface PublicClientInput {
  name: string;
  redirectUris: readonly string[];
  /** Default: DEFAULT_PUBLIC_CLIENT_SCOPES. */
  scopes?: readonly string[];
  /** Default: LATEST_API_VERSION. */
  apiVersion?: number;
}

export interface ConfidentialClientInput {
  name: string;
  /** client_credentials (the default), authorization_code, or both. */
  grantTypes?: readonly string[];
  /** Required with authorization_code; none without it. */
  redirectUris?: readonly string[];
  scopes: readonly string[];
  /** Default: LATEST_API_VERSION. */
  apiVersion?: number;
}

/** oidc-provider client metadata, as stored in oauth_clients.metadata. */
export type ClientMetadata = Record<string, unknown> & { client_id: string; client_name: string };

export function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 200) throw new ClientMetadataError('client name must be 1–200 characters');
  return trimmed;
}

export function buildPublicClientMetadata(clientId: string, input: PublicClientInput): ClientMetadata {
  const name = checkName(input.name);
  if (!input.redirectUris.length) throw new ClientMetadataError('a public client needs at least one redirect URI');
  const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))];
  const scopes = input.scopes?.length ? parseClientScopes(input.scopes, CLIENT_SCOPES, 'a public client') : DEFAULT_PUBLIC_CLIENT_SCOPES;
  if (!scopes.length) throw new ClientMetadataError('a public client needs at least one scope');
  return {
    client_id: clientId,
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // A public client cannot keep a secret; PKCE (required for every client) binds its codes.
    token_endpoint_auth_method: 'none',
    scope: scopes.join(' '),
  };
}

/** What a confidential client's grants make of its metadata: grant and response types, redirect URIs, scopes. */
export function buildConfidentialGrants(input: ConfidentialClientInput, what: string): Record<string, unknown> {
  const grants = [...new Set(input.grantTypes?.length ? input.grantTypes : ['client_credentials'])];
  const refused = grants.filter((grant) => grant !== 'client_credentials' && grant !== 'authorization_code');
  if (refused.length) {
    throw new ClientMetadataError(`${what} supports --grant client_credentials and --grant authorization_code, not ${refused.join(', ')}`);
  }
  const code = grants.includes('authorization_code');
  const redirectUris = [...new Set((input.redirectUris ?? []).map(checkRedirectUri))];
  if (code && !redirectUris.length) throw new ClientMetadataError(`${what} with the authorization_code grant needs a redirect URI`);
  if (!code && redirectUris.length) throw new ClientMetadataError(`${what} without the authorization_code grant has no redirect URIs`);
  // Acting for a user, it may ask for who they are and stay signed in; acting for itself, API scopes only.
  const scopes = code
    ? parseClientScopes(input.scopes, CLIENT_SCOPES, what)
    : parseClientScopes(input.scopes, SERVICE_CLIENT_SCOPES, 'a client-credentials client');
  if (!scopes.some((scope) => SERVICE_CLIENT_SCOPES.includes(scope))) throw new ClientMetadataError(`${what} needs at least one API scope`);
  return {
    grant_types: code ? [...grants, 'refresh_token'] : grants,
    response_types: code ? ['code'] : [],
    redirect_uris: redirectUris,
    scope: scopes.join(' '),
  };
}

/** `clientSecretHash` is stored in place of the secret (see passwords.ts and docs/decisions/0025-client-secrets-stored-hashed.md). */
export function buildConfidentialClientMetadata(
  clientId: string,
  clientSecretHash: string,
  input: ConfidentialClientInput,
): ClientMetadata {
  return {
    client_id: clientId,
    client_secret: clientSecretHash,
    client_name: checkName(input.name),
    ...buildConfidentialGrants(input, 'a confidential client'),
    token_endpoint_auth_method: 'client_secret_basic',
  };
}

/** After a rotation, how long the secret before it still authenticates when no grace is given. */
export const DEFAULT_SECRET_GRACE = '24h';
/** The longest grace a rotation may give: a secret meant to be retired is not kept for months. */
const MAX_SECRET_GRACE_SECONDS = 30 * 24 * 3600;
const GRACE_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 24 * 3600 };

/**
 * A rotation's grace in seconds, from a whole number of seconds, minutes, hours or days ("90s",
 * "15m", "24h", "7d"), or "0": the previous secret stops at once (a leaked one).
 */
export function parseSecretGrace(text: string): number {
  const match = /^(\d{1,7})([smhd])$/.exec(text);
  const seconds = text === '0' ? 0 : match ? Number(match[1]) * GRACE_UNITS[match[2]!]! : Number.NaN;
  if (Number.isNaN(seconds)) {
    throw new ClientMetadataError(
      `--grace "${text}" is not a duration: a whole number with s, m, h or d (e.g. ${DEFAULT_SECRET_GRACE}), or 0`,
    );
  }
  if (seconds > MAX_SECRET_GRACE_SECONDS)
    throw new ClientMetadataError(`--grace "${text}" is longer than the 30 days a previous secret may be kept`);
  return seconds;
}
