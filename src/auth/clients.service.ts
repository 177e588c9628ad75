// Operators' changes to an OAuth client (`orderpay clients disable | enable | delete |
// rotate-secret`), each in one transaction: the oauth_clients row, the revocation every resource
// server reads (revoked_subjects), and the grants the authorization server holds for the client
// (docs/decisions/0112-disabling-and-erasing.md, 0113-client-secret-rotation.md).
import { clientSubject } from '../core/subject-revocation.ts';
import type { Db, Queryable } from '../db/db.ts';
import { CONSOLE_CLIENT_ID } from '../http/console-page.ts';
import { DOCS_CLIENT_ID } from '../http/docs-page.ts';
import {
  deleteClientRow,
  findClientForUpdate,
  generateClientSecret,
  replaceClientKeys,
  replaceClientSecret,
  setClientDisabled,
  type ClientSummary,
} from './clients.store.ts';
import type { ClientKeys } from './fapi2-profile.ts';
import { revokeOidcPayloadsOf } from './oidc.adapter.ts';
import { hashClientSecret } from './passwords.ts';
import { recordSubjectDeleted, recordSubjectDisabled, recordSubjectRestored } from './revoked-subjects.store.ts';

export type ClientChange =
  | { outcome: 'not-found' }
  /** The /docs or /console page's client: declared by the configuration, not registered (docs-client.ts, console-client.ts). */
  | { outcome: 'built-in' }
  /** Already as asked: nothing was written. */
  | { outcome: 'unchanged'; client: ClientSummary }
  /** The client after the change (as it was, when deleted); `revokedGrants`: the grants ended. */
  | { outcome: 'changed'; client: ClientSummary; revokedGrants: number };

export type SecretRotation =
  | Exclude<ClientChange, { outcome: 'unchanged' | 'changed' }>
  /** A public client has no secret to rotate. */
  | { outcome: 'public'; client: ClientSummary }
  /** Nor has one that authenticates with its keys (private_key_jwt). */
  | { outcome: 'no-secret'; client: ClientSummary }
  /** `clientSecret` exists only in this answer. */
  | { outcome: 'rotated'; client: ClientSummary; clientSecret: string };

export type KeysReplacement =
  | Exclude<ClientChange, { outcome: 'unchanged' | 'changed' }>
  /** A client that authenticates with a secret, or none, has no keys to replace. */
  | { outcome: 'no-keys'; client: ClientSummary }
  | { outcome: 'replaced'; client: ClientSummary };

/** The client, locked; or why there is none to change. */
async function lockClient(tx: Queryable, clientId: string): Promise<ClientSummary | { outcome: 'not-found' | 'built-in' }> {
  if (clientId === DOCS_CLIENT_ID || clientId === CONSOLE_CLIENT_ID) return { outcome: 'built-in' };
  return (await findClientForUpdate(tx, clientId)) ?? { outcome: 'not-found' };
}

const isRefusal = (found: ClientSummary | { outcome: string }): found is { outcome: 'not-found' | 'built-in' } => 'outcome' in found;

/**
 * The client can get no token (the provider's adapter knows no disabled client: invalid_client),
 * its grants and refresh tokens end, and every resource server refuses its access tokens within
 * about a second; introspection answers them inactive.
 */
export function disableClient(db: Db, clientId: string): Promise<ClientChange> {
  return db.transaction(async (tx) => {
    const client = await lockClient(tx, clientId);
    if (isRefusal(client)) return client;
    if (client.disabledAt !== null) return { outcome: 'unchanged', client };
    const disabled = await setClientDisabled(tx, clientId, true);
    await recordSubjectDisabled(tx, clientSubject(clientId));
    const revokedGrants = await revokeOidcPayloadsOf(tx, { clientId });
    return { outcome: 'changed', client: disabled, revokedGrants };
  });
}

/** The client can get tokens again; what was revoked when it was disabled stays revoked. */
export function enableClient(db: Db, clientId: string): Promise<ClientChange> {
  return db.transaction(async (tx) => {
    const client = await lockClient(tx, clientId);
    if (isRefusal(client)) return client;
    if (client.disabledAt === null) return { outcome: 'unchanged', client };
    const enabled = await setClientDisabled(tx, clientId, false);
    await recordSubjectRestored(tx, clientSubject(clientId));
    return { outcome: 'changed', client: enabled, revokedGrants: 0 };
  });
}

/**
 * The client is gone: its row, its grants and everything issued under them; its access tokens are
 * refused until they would have expired. Payments and idempotency keys that name it keep its id (a
 * plain column, no foreign key), as do the records events carry: they are accounts of what it did.
 */
export function deleteClient(db: Db, clientId: string): Promise<ClientChange> {
  return db.transaction(async (tx) => {
    const client = await lockClient(tx, clientId);
    if (isRefusal(client)) return client;
    const revokedGrants = await revokeOidcPayloadsOf(tx, { clientId });
    await recordSubjectDeleted(tx, clientSubject(clientId));
    await deleteClientRow(tx, clientId);
    return { outcome: 'changed', client, revokedGrants };
  });
}

/**
 * A new secret for a confidential client; the one it replaces still authenticates for
 * `graceSeconds` (provider.ts compares both), so the client's deployments can switch one by one.
 * Tokens already issued are not touched. A disabled client may be rotated (and enabled after).
 */
export async function rotateClientSecret(db: Db, clientId: string, graceSeconds: number): Promise<SecretRotation> {
  const clientSecret = generateClientSecret();
  // Hashed before the transaction: the row is not held locked while scrypt runs.
  const secretHash = await hashClientSecret(clientSecret);
  return db.transaction(async (tx) => {
    const client = await lockClient(tx, clientId);
    if (isRefusal(client)) return client;
    if (client.type === 'public') return { outcome: 'public', client };
    if (client.tokenEndpointAuthMethod !== 'client_secret_basic') return { outcome: 'no-secret', client };
    const rotated = await replaceClientSecret(tx, clientId, secretHash, graceSeconds);
    return { outcome: 'rotated', client: rotated, clientSecret };
  });
}

/**
 * The public keys a private_key_jwt client (a FAPI 2.0 one) authenticates with from now on: the next
 * client assertion must be signed by one of them. To rotate without a gap, register the new key
 * beside the old one, move the client to it, then register the new one alone.
 */
export function replaceKeys(db: Db, clientId: string, keys: ClientKeys): Promise<KeysReplacement> {
  return db.transaction(async (tx) => {
    const client = await lockClient(tx, clientId);
    if (isRefusal(client)) return client;
    if (client.tokenEndpointAuthMethod !== 'private_key_jwt') return { outcome: 'no-keys', client };
    return { outcome: 'replaced', client: (await replaceClientKeys(tx, clientId, keys))! };
  });
}
