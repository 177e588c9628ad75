// User checks other work relies on: that the user a request names, or acts as, exists.
import { DomainError } from '../core/errors.ts';
import type { Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { isForeignKeyViolation } from '../db/sqlstate.ts';
import { userExists } from './users.store.ts';

export async function assertUserExists(db: Queryable, userId: number): Promise<void> {
  if (!(await userExists(db, userId))) throw new DomainError('USER_NOT_FOUND', `User ${userId} does not exist.`);
}

/** The foreign keys by which a write names the token's user as the customer. */
const SUBJECT_FOREIGN_KEYS: ReadonlySet<string> = new Set(['orders_customer_id_fkey', 'payments_customer_id_fkey']);

/**
 * Runs a write that records something for the token's user; a user that does not (any more) exist
 * is refused by the write's own foreign key, not by a read before it (a round trip fewer on every
 * order and payment), and answered as that user's absence.
 */
export async function forExistingSubject<T>(principal: Principal, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (principal.kind === 'user' && isForeignKeyViolation(error) && SUBJECT_FOREIGN_KEYS.has(error.constraint ?? '')) {
      throw new DomainError('AUTH_SUBJECT_UNKNOWN', `User ${principal.userId} named by the access token does not exist.`);
    }
    throw error;
  }
}
