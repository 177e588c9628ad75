// Operators' changes to a user's access (`orderpay users disable | enable | erase`), each a
// checklist of named steps in one transaction: the users row, the revocation every resource server
// reads (revoked_subjects), and what the authorization server holds for the user (oidc_payloads).
// docs/decisions/0112-disabling-and-erasing.md says what each reaches and what it does not.
import { userSubject } from '../core/subject-revocation.ts';
import type { Db, Queryable } from '../db/db.ts';
import { deleteRateLimitKey } from '../db/rate-limits.ts';
import { erasedUserPlaceholders } from '../users/users.rules.ts';
import { findUserAccount, replaceUserPersonalData, setUserDisabled, type UserAccount, type UserRef } from '../users/users.store.ts';
import { revokeOidcPayloadsOf } from './oidc.adapter.ts';
import { signInAccountKey } from './rate-limits.ts';
import { recordSubjectDisabled, recordSubjectRestored } from './revoked-subjects.store.ts';

export type AccountChange =
  | { outcome: 'not-found' }
  /** Already as asked: nothing was written. */
  | { outcome: 'unchanged'; user: UserAccount }
  /** Enabling an erased user: erasure is for good. */
  | { outcome: 'erased'; user: UserAccount }
  /** `revokedGrants`: the grants of the authorization server that were ended. */
  | { outcome: 'changed'; user: UserAccount; revokedGrants: number };

/**
 * The user can no longer sign in (the sign-in step and the provider's findAccount skip a disabled
 * user), its grants, refresh tokens and sessions end, and every resource server refuses its access
 * tokens within about a second.
 */
export function disableUser(db: Db, ref: UserRef): Promise<AccountChange> {
  return db.transaction(async (tx) => {
    const user = await findUserAccount(tx, ref, { lock: true });
    if (!user) return { outcome: 'not-found' };
    if (user.disabledAt !== null) return { outcome: 'unchanged', user };
    const disabled = await setUserDisabled(tx, user.id, true);
    const revokedGrants = await revokeUserAccess(tx, user.id);
    return { outcome: 'changed', user: disabled, revokedGrants };
  });
}

/**
 * The user can sign in again. What was revoked stays revoked: the grants ended when it was
 * disabled, and tokens issued before it was (src/core/subject-revocation.ts).
 */
export function enableUser(db: Db, ref: UserRef): Promise<AccountChange> {
  return db.transaction(async (tx) => {
    const user = await findUserAccount(tx, ref, { lock: true });
    if (!user) return { outcome: 'not-found' };
    if (user.erasedAt !== null) return { outcome: 'erased', user };
    if (user.disabledAt === null) return { outcome: 'unchanged', user };
    const enabled = await setUserDisabled(tx, user.id, false);
    await recordSubjectRestored(tx, userSubject(user.id));
    return { outcome: 'changed', user: enabled, revokedGrants: 0 };
  });
}

/**
 * Erasure of the user's personal data on request (GDPR Art. 17): email, name and password hash
 * replaced by placeholders, the user disabled for good, its sign-in counter forgotten. Orders,
 * payments, refunds and events are kept for accountability and still name the user's id, which
 * names no one any more.
 */
export function eraseUser(db: Db, ref: UserRef): Promise<AccountChange> {
  return db.transaction(async (tx) => {
    const user = await findUserAccount(tx, ref, { lock: true });
    if (!user) return { outcome: 'not-found' };
    if (user.erasedAt !== null) return { outcome: 'unchanged', user };
    const erased = await replaceUserPersonalData(tx, user.id, erasedUserPlaceholders(user.id));
    // Disabled before: its access is already revoked, and a second pass finds nothing new.
    const revokedGrants = user.disabledAt === null ? await revokeUserAccess(tx, user.id) : 0;
    await forgetSignInFailures(tx, user.email);
    return { outcome: 'changed', user: erased, revokedGrants };
  });
}

/** Every token of the user refused from now on; its grants, refresh tokens and sessions gone. */
async function revokeUserAccess(tx: Queryable, userId: number): Promise<number> {
  await recordSubjectDisabled(tx, userSubject(userId));
  return revokeOidcPayloadsOf(tx, { accountId: String(userId) });
}

/**
 * The failed sign-ins counted under the old email (kept up to a day by the purge). Counted in
 * PostgreSQL only: counters in Redis (REDIS_URL) expire with their 15-minute window.
 */
function forgetSignInFailures(tx: Queryable, email: string): Promise<void> {
  return deleteRateLimitKey(tx, signInAccountKey(email));
}
