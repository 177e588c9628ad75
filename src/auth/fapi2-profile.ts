// The FAPI 2.0 Security Profile (final, February 2025) as a client profile: what a client registered
// with `--profile fapi2` is held to, as oidc-provider client metadata, and the checks on the public
// keys it authenticates with. Pure: the provider's own configuration (src/auth/provider.ts) reads
// the profile from the metadata, and docs/fapi.md cites each requirement's section.
import {
  checkName,
  ClientMetadataError,
  buildConfidentialGrants,
  type ClientMetadata,
  type ConfidentialClientInput,
} from './clients.rules.ts';
import { isLoopbackHost } from '../core/loopback.ts';

/** Every client is one of these; `oauth2.1` is the server's own baseline (PKCE, Bearer or DPoP). */
export const CLIENT_PROFILES = ['oauth2.1', 'fapi2'] as const;
export type ClientProfile = (typeof CLIENT_PROFILES)[number];

/** Where the profile is kept in a client's metadata (provider.ts's extraClientMetadata). */
export const PROFILE_METADATA = 'orderpay_profile';

/** FAPI 2.0 §5.4.1: the only algorithms its JWTs (client assertions, tokens, DPoP proofs) may use. */
export const FAPI2_SIGNING_ALGS = ['PS256', 'ES256', 'EdDSA'] as const;

/**
 * The scopes that move money. With ORDERPAY_FAPI2_FOR_PAYMENTS, a third-party confidential client
 * holds them only on the FAPI 2.0 profile.
 */
export const MONEY_SCOPES: readonly string[] = ['payments:write', 'payments:refund'];

export function clientProfileOf(metadata: Record<string, unknown>): ClientProfile {
  return metadata[PROFILE_METADATA] === 'fapi2' ? 'fapi2' : 'oauth2.1';
}

export function checkClientProfile(profile: string): ClientProfile {
  if (!(CLIENT_PROFILES as readonly string[]).includes(profile)) {
    throw new ClientMetadataError(`--profile "${profile}" is not a client profile; known: ${CLIENT_PROFILES.join(', ')}`);
  }
  return profile as ClientProfile;
}

/** A client's public keys: by value (a JWK Set) or by reference (its jwks_uri). */
export type ClientKeys = { jwks: { keys: Record<string, unknown>[] } } | { jwksUri: string };

export interface Fapi2ClientInput extends ConfidentialClientInput {
  keys: ClientKeys;
}

/** Members only a private or symmetric JWK has (RFC 7518 §6). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** FAPI 2.0 §5.4.1 items 2 and 3: RSA keys of at least 2048 bits, elliptic curves of at least 224. */
function checkKeyStrength(key: Record<string, unknown>, name: string): void {
  if (key.kty === 'RSA') {
    const bits = typeof key.n === 'string' ? Buffer.from(key.n, 'base64url').length * 8 : 0;
    if (bits < 2048) throw new ClientMetadataError(`${name} is an RSA key of ${bits} bits; FAPI 2.0 needs at least 2048`);
  } else if (key.kty === 'EC') {
    if (key.crv !== 'P-256') throw new ClientMetadataError(`${name} is on curve ${String(key.crv)}; ES256 needs P-256`);
  } else if (key.kty === 'OKP') {
    if (key.crv !== 'Ed25519') throw new ClientMetadataError(`${name} is on curve ${String(key.crv)}; EdDSA here means Ed25519`);
  } else {
    throw new ClientMetadataError(`${name} has kty ${String(key.kty)}; a FAPI 2.0 client signs with RSA (PS256), EC P-256 or Ed25519`);
  }
}

/**
 * A JWK Set of public signing keys a FAPI 2.0 client may authenticate with: no private members, a
 * strong enough key, an algorithm of §5.4.1 when one is named, and no kid used twice (§5.4.2).
 */
export function checkClientJwks(jwks: unknown): { keys: Record<string, unknown>[] } {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || !keys.length) throw new ClientMetadataError('the JWK Set must be {"keys": [...]} with at least one key');
  const kids = new Set<string>();
  keys.forEach((key: Record<string, unknown>, index) => {
    const name = `key ${typeof key?.kid === 'string' ? `"${key.kid}"` : index + 1}`;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw new ClientMetadataError(`${name} is not a JWK`);
    const exposed = PRIVATE_MEMBERS.filter((member) => member in key);
    if (exposed.length)
      throw new ClientMetadataError(`${name} holds private members (${exposed.join(', ')}): register the public key only`);
    checkKeyStrength(key, name);
    if (key.use !== undefined && key.use !== 'sig')
      throw new ClientMetadataError(`${name} has use "${String(key.use)}"; it must sign ("sig")`);
    if (key.alg !== undefined && !(FAPI2_SIGNING_ALGS as readonly unknown[]).includes(key.alg)) {
      throw new ClientMetadataError(`${name} names alg ${String(key.alg)}; FAPI 2.0 allows ${FAPI2_SIGNING_ALGS.join(', ')}`);
    }
    if (typeof key.kid === 'string') {
      if (kids.has(key.kid)) throw new ClientMetadataError(`kid "${key.kid}" is used by two keys`);
      kids.add(key.kid);
    }
  });
  return { keys };
}

/**
 * FAPI 2.0 §5.4.2: a jwks_uri is served over TLS (plain http only on a loopback host, which the
 * provider reads outside production only: provider.ts, clientKeysFetch).
 */
export function checkJwksUri(uri: string): string {
  const parsed = URL.parse(uri);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
    throw new ClientMetadataError(`jwks_uri "${uri}" is not an https URL`);
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    throw new ClientMetadataError(`jwks_uri "${uri}" must use https (plain http only on 127.0.0.1, [::1] or localhost)`);
  }
  return uri;
}

/** The keys' part of the metadata: jwks or jwks_uri, never both. */
export function buildClientKeysMetadata(keys: ClientKeys): Record<string, unknown> {
  return 'jwks' in keys ? { jwks: checkClientJwks(keys.jwks) } : { jwks_uri: checkJwksUri(keys.jwksUri) };
}

/**
 * A FAPI 2.0 client: confidential only (§5.3.2.1 item 3), authenticated by private_key_jwt (item 6),
 * its access tokens DPoP-bound (items 4, 5), its authorization requests pushed (§5.3.2.2 items 2, 3),
 * its ID tokens signed PS256 (§5.4.1). PKCE S256 (§5.3.2.2 item 5) every client must use already.
 */
export function buildFapi2ClientMetadata(clientId: string, input: Fapi2ClientInput): ClientMetadata {
  const grants = buildConfidentialGrants(input, 'a FAPI 2.0 client');
  const code = (grants.grant_types as string[]).includes('authorization_code');
  return {
    client_id: clientId,
    client_name: checkName(input.name),
    ...grants,
    token_endpoint_auth_method: 'private_key_jwt',
    ...buildClientKeysMetadata(input.keys),
    dpop_bound_access_tokens: true,
    ...(code ? { require_pushed_authorization_requests: true, id_token_signed_response_alg: 'PS256' } : {}),
    [PROFILE_METADATA]: 'fapi2',
  };
}

/**
 * The scopes ORDERPAY_FAPI2_FOR_PAYMENTS withholds from a client: with the setting on, a
 * confidential client outside the FAPI 2.0 profile does not hold the scopes that move money.
 * Public clients (first-party apps, /docs, the console) are not touched: FAPI 2.0 does not cover them.
 */
export function moneyScopesWithheld(
  client: { isPublic: boolean; profile: ClientProfile; scope: string },
  fapi2ForPayments: boolean,
): string[] {
  if (!fapi2ForPayments || client.isPublic || client.profile === 'fapi2') return [];
  return client.scope.split(' ').filter((scope) => MONEY_SCOPES.includes(scope));
}

/** The metadata the provider works with: without the withheld scopes (they are refused, invalid_scope). */
export function withheldMoneyScopes(metadata: ClientMetadata, fapi2ForPayments: boolean): ClientMetadata {
  const scope = typeof metadata.scope === 'string' ? metadata.scope : '';
  const client = { isPublic: metadata.token_endpoint_auth_method === 'none', profile: clientProfileOf(metadata), scope };
  const withheld = moneyScopesWithheld(client, fapi2ForPayments);
  if (!withheld.length) return metadata;
  return {
    ...metadata,
    scope: scope
      .split(' ')
      .filter((s) => s && !withheld.includes(s))
      .join(' '),
  };
}
