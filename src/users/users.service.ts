// User checks other work relies on: that the user a request names, or acts as, exists.
import { DomainError } from '../core/errors.ts';
import type { Principal } from '../core/principal.ts';
import type { Queryable } from '../db/db.ts';
import { userExists } from './users.store.ts';

export async function assertUserExists(db: Queryable, userId: number): Promise<void> {
  if (!(await userExists(db, userId))) throw new DomainError('USER_NOT_FOUND', `User ${userId} does not exist.`);
}

/** The user an access token names must (still) exist before anything is recorded for them. */
export async function assertSubjectExists(db: Queryable, principal: Principal): Promise<void> {
  if (principal.kind === 'user' && !(await userExists(db, principal.userId))) {
    throw new DomainError('AUTH_SUBJECT_UNKNOWN', `User ${principal.userId} named by the access token does not exist.`);
  }
}
